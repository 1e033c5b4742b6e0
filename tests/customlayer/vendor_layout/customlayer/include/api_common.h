/* A user's copy of an SDK header, as vendor customlayer directories carry
 * one. The SDK's api_common.h must be used in its place (even by the
 * project's own headers beside this file), so this copy must never be
 * compiled. */
#error "the project's copy of api_common.h was compiled instead of the SDK's"
