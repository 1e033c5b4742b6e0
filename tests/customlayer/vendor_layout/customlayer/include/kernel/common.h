/* A user's copy of an SDK header (see ../api_common.h): never compiled. */
#error "the project's copy of kernel/common.h was compiled instead of the SDK's"
