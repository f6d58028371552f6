// One specialization constant of every scalar type, for the SPIR-V reader's unit tests
// (hashing_spirv_module_test.cpp). SpecId n has the n-th type below; llvm-spirv turns each
// __spirv_SpecConstant(id, default) call into an OpSpecConstant* decorated with SpecId id.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define DECLARE_SPEC_CONSTANT(T) T __attribute__((overloadable)) __spirv_SpecConstant(int spec_id, T default_value);
DECLARE_SPEC_CONSTANT(bool)
DECLARE_SPEC_CONSTANT(char)
DECLARE_SPEC_CONSTANT(short)
DECLARE_SPEC_CONSTANT(int)
DECLARE_SPEC_CONSTANT(long)
DECLARE_SPEC_CONSTANT(half)
DECLARE_SPEC_CONSTANT(float)
DECLARE_SPEC_CONSTANT(double)

kernel void widths(global double* out) {
  out[0] = __spirv_SpecConstant(1, true) ? 1.0 : 0.0;
  out[1] = __spirv_SpecConstant(2, (char)-3);
  out[2] = __spirv_SpecConstant(3, (short)-300);
  out[3] = __spirv_SpecConstant(4, 70000);
  out[4] = __spirv_SpecConstant(5, 5000000000L);
  out[5] = __spirv_SpecConstant(6, (half)1.5h);
  out[6] = __spirv_SpecConstant(7, 2.5f);
  out[7] = __spirv_SpecConstant(8, 3.25);
}

kernel void second_entry(global int* out) { out[0] = __spirv_SpecConstant(4, 70000); }
