// ppl_shapes.cc: local tensors declared without a shape (`tensor<fp16> a;`,
// spec §2.4, §2.6). The first operation that writes such a tensor and has
// inputs gives it their shape, which is its block and never changes after;
// its allocation is sized and planned from then on (docs/ppl.md, "Tensors
// without a shape"). Anything else that meets it first is PplShapeInferErr
// at the .pl line, naming where the tensor was declared.
#include <cstring>

#include <fmt/format.h>

#include "cmodel/call_site.h"
#include "ppl_state.h"

namespace ppl::rt {
namespace {

std::string declared_at(const state &st, int shape_id) {
  const shape_record &r = st.shapes[static_cast<size_t>(shape_id)];
  return fmt::format("the tensor declared without a shape at {}:{}", cmodel::base_name(r.file.c_str()), r.line);
}

}  // namespace

int declare_unshaped(const site &where) {
  state &st = current();
  if (st.mode == pass::idle) refuse("ppl::tensor", where, "a local tensor was created outside a kernel call");
  st.shapes.push_back({where.file_name(), static_cast<int>(where.line()), false, {}});
  return static_cast<int>(st.shapes.size()) - 1;
}

void resolve(desc &d) {
  const state &st = current();
  if (d.shape_id < 0 || d.shape_id >= static_cast<int>(st.shapes.size())) return;
  const shape_record &r = st.shapes[static_cast<size_t>(d.shape_id)];
  if (!r.known) return;
  d.shape = d.block = r.shape;
  d.stride = local_strides(r.shape, d.align, d.element_size, 0);
  d.lane = 0;
  d.shape_id = -1;
}

void require_shape_known(const char *name, const desc &d, const site &where) {
  if (d.shape_id < 0) return;
  refuse_shape(name, where,
               fmt::format("{} has no shape yet: a view of it cannot be taken before an operation with inputs "
                           "writes the tensor itself (or give it a shape where it is declared)",
                           declared_at(current(), d.shape_id)));
}

void check_known(const char *name, const char *role, const desc &d, const site &where) {
  if (d.shape_id < 0) return;
  if (std::strcmp(role, "dst") == 0)
    refuse_shape(name, where,
                 fmt::format("{} is written first here, by an operation without an input to take its shape from: "
                             "give it a shape where it is declared",
                             declared_at(current(), d.shape_id)));
  refuse_shape(name, where,
               fmt::format("{} is read here ({}) before any operation wrote it", declared_at(current(), d.shape_id),
                           role));
}

desc written(const char *name, const desc &dst, const dim4 &shape, const site &where) {
  if (dst.shape_id < 0) return dst;
  state &st = current();
  if (shape.n < 1 || shape.c < 1 || shape.h < 1 || shape.w < 1)
    refuse_shape(name, where,
                 fmt::format("{} would take the shape [{}, {}, {}, {}], which has an extent below 1",
                             declared_at(st, dst.shape_id), shape.n, shape.c, shape.h, shape.w));
  shape_record &r = st.shapes[static_cast<size_t>(dst.shape_id)];
  r.known = true;
  r.shape = shape;
  size_allocation(dst.instance, shape, dst.align, dst.element_size);
  desc shaped = dst;
  resolve(shaped);
  return shaped;
}

dim4 broadcast_shape(const char *name, std::initializer_list<std::pair<const char *, const desc *>> inputs,
                     const site &where) {
  dim4 out{1, 1, 1, 1};
  for (const auto &[role, d] : inputs) {
    check_known(name, role, *d, where);
    out = dim4{std::max(out.n, d->shape.n), std::max(out.c, d->shape.c), std::max(out.h, d->shape.h),
               std::max(out.w, d->shape.w)};
  }
  return out;
}

}  // namespace ppl::rt
