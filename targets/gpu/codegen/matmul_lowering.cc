// dot -> cuBLASLt matmul (see matmul_lowering.h).
#include "targets/gpu/codegen/matmul_lowering.h"

namespace gpu::codegen {

namespace {

// The free (neither batch nor contracting) dimension of an operand, -1 when there is none.
struct OperandForm {
  int64_t free_dim = -1;
  int64_t contracting_dim = -1;
};

std::variant<OperandForm, std::string> ReadForm(const hlo::Shape& shape,
                                                const std::vector<int64_t>& batch,
                                                const std::vector<int64_t>& contracting,
                                                const char* side) {
  for (size_t i = 0; i < batch.size(); ++i)
    if (batch[i] != static_cast<int64_t>(i))
      return std::string(side) + " batch dimensions are not the leading ones";
  if (contracting.size() != 1)
    return std::string(side) + " has " + std::to_string(contracting.size()) +
           " contracting dimensions (cuBLASLt takes one)";
  OperandForm form;
  form.contracting_dim = contracting[0];
  const int64_t rank = shape.rank();
  if (rank - static_cast<int64_t>(batch.size()) > 2)
    return std::string(side) + " has more than one free dimension";
  for (int64_t d = static_cast<int64_t>(batch.size()); d < rank; ++d)
    if (d != form.contracting_dim) form.free_dim = d;
  return form;
}

std::optional<gpu::DType> MatmulType(hlo::PrimitiveType type) {
  switch (type) {
    case hlo::PrimitiveType::kF32:
      return gpu::DType::kF32;
    case hlo::PrimitiveType::kF16:
      return gpu::DType::kF16;
    case hlo::PrimitiveType::kBF16:
      return gpu::DType::kBF16;
    case hlo::PrimitiveType::kF64:
      return gpu::DType::kF64;  // cuBLASLt's COMPUTE_64F (TORAX's f64 physics)
    default:
      return std::nullopt;
  }
}

}  // namespace

std::variant<gpu::MatmulCall, std::string> LowerDotToMatmul(const hlo::Instruction& dot,
                                                            gpu::Slice a, gpu::Slice b,
                                                            gpu::Slice d) {
  const hlo::Shape& lhs = dot.operand(0)->shape();
  const hlo::Shape& rhs = dot.operand(1)->shape();
  const hlo::Shape& out = dot.shape();
  if (!lhs.HasDefaultLayout() || !rhs.HasDefaultLayout() || !out.HasDefaultLayout())
    return std::string("operands or result are not row-major");
  std::optional<gpu::DType> dtype = MatmulType(out.type);
  if (!dtype || lhs.type != out.type || rhs.type != out.type)
    return std::string("element types are not one of f32, f16, bf16, f64 throughout");
  const hlo::DotDimensionNumbers& dnums = dot.attr<hlo::DotAttrs>().dnums;
  auto lhs_form = ReadForm(lhs, dnums.lhs_batch, dnums.lhs_contracting, "lhs");
  if (auto* reason = std::get_if<std::string>(&lhs_form)) return *reason;
  auto rhs_form = ReadForm(rhs, dnums.rhs_batch, dnums.rhs_contracting, "rhs");
  if (auto* reason = std::get_if<std::string>(&rhs_form)) return *reason;
  const OperandForm l = std::get<OperandForm>(lhs_form);
  const OperandForm r = std::get<OperandForm>(rhs_form);

  gpu::MatmulCall call;
  call.dtype = *dtype;
  call.k = lhs.dims[static_cast<size_t>(l.contracting_dim)];
  call.m = l.free_dim < 0 ? 1 : lhs.dims[static_cast<size_t>(l.free_dim)];
  call.n = r.free_dim < 0 ? 1 : rhs.dims[static_cast<size_t>(r.free_dim)];
  call.batch = 1;
  for (int64_t dim : dnums.lhs_batch) call.batch *= lhs.dims[static_cast<size_t>(dim)];
  // A stored m x k (contracting last) or k x m (contracting before the free dimension).
  call.transpose_a = l.free_dim >= 0 && l.contracting_dim < l.free_dim;
  call.lda = call.transpose_a ? call.m : call.k;
  // B stored k x n (contracting first) or n x k (contracting last).
  call.transpose_b = r.free_dim >= 0 && r.contracting_dim > r.free_dim;
  call.ldb = call.transpose_b ? call.k : call.n;
  call.ldd = call.n;
  if (call.batch > 1) {
    call.stride_a = call.m * call.k;
    call.stride_b = call.k * call.n;
    call.stride_d = call.m * call.n;
  }
  call.a = a;
  call.b = b;
  call.d = d;
  return call;
}

}  // namespace gpu::codegen
