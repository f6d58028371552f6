/* Which driver query a long kernel name breaks: for each query jitcache may make, a child process
 * builds a program whose only kernel has a name of LENGTH characters (argv[1], default 512), makes
 * the query, then builds and releases more programs (so that a corrupted heap shows), and exits.
 * Prints "<query> ok" or "<query> died (signal N)". Diagnostic for the GPU machine (NVIDIA). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static cl_context context;
static cl_device_id device;

static cl_program build(int length) {
  char* source = malloc(length + 200);
  char* name = malloc(length + 1);
  for (int i = 0; i < length; ++i) name[i] = "abcdefghijklmnopqrstuvwxyz"[i % 26];
  name[length] = 0;
  sprintf(source, "__kernel void %s(int src, __global int* dst) { dst[0] = src; }\n", name);
  const char* text = source;
  cl_int status;
  cl_program program = clCreateProgramWithSource(context, 1, &text, NULL, &status);
  if (clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS) exit(3);
  free(source);
  free(name);
  return program;
}

static void query(const char* what, cl_program program) {
  size_t size = 0;
  char buffer[1 << 16];
  cl_kernel kernels[4];
  cl_uint count = 0;
  if (!strcmp(what, "program_kernel_names")) {
    clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size);
    clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, sizeof buffer, buffer, NULL);
  } else if (!strcmp(what, "program_num_kernels")) {
    clGetProgramInfo(program, CL_PROGRAM_NUM_KERNELS, sizeof size, &size, NULL);
  } else if (!strcmp(what, "build_log")) {
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof buffer, buffer, NULL);
  } else if (!strcmp(what, "binaries")) {
    clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    unsigned char* binary = malloc(size);
    clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL);
    free(binary);
  } else {
    if (clCreateKernelsInProgram(program, 4, kernels, &count) != CL_SUCCESS) exit(4);
    for (cl_uint k = 0; k < count; ++k) {
      if (!strcmp(what, "kernel_function_name")) {
        clGetKernelInfo(kernels[k], CL_KERNEL_FUNCTION_NAME, sizeof buffer, buffer, NULL);
      } else if (!strcmp(what, "kernel_attributes")) {
        clGetKernelInfo(kernels[k], CL_KERNEL_ATTRIBUTES, 0, NULL, &size);
        clGetKernelInfo(kernels[k], CL_KERNEL_ATTRIBUTES, sizeof buffer, buffer, NULL);
      } else if (!strcmp(what, "kernel_num_args")) {
        clGetKernelInfo(kernels[k], CL_KERNEL_NUM_ARGS, sizeof count, &count, NULL);
      } else if (!strcmp(what, "kernel_arg_info")) {
        const cl_kernel_arg_info params[] = {CL_KERNEL_ARG_ADDRESS_QUALIFIER, CL_KERNEL_ARG_ACCESS_QUALIFIER,
                                             CL_KERNEL_ARG_TYPE_NAME, CL_KERNEL_ARG_TYPE_QUALIFIER,
                                             CL_KERNEL_ARG_NAME};
        for (cl_uint arg = 0; arg < 2; ++arg) {
          for (int p = 0; p < 5; ++p) {
            clGetKernelArgInfo(kernels[k], arg, params[p], 0, NULL, &size);
            clGetKernelArgInfo(kernels[k], arg, params[p], sizeof buffer, buffer, NULL);
          }
        }
      }
      clReleaseKernel(kernels[k]);
    }
  }
}

int main(int argc, char** argv) {
  const int length = argc > 1 ? atoi(argv[1]) : 512;
  const char* queries[] = {"none", "program_kernel_names", "program_num_kernels", "build_log", "binaries",
                           "kernels_in_program", "kernel_function_name", "kernel_attributes", "kernel_num_args",
                           "kernel_arg_info"};
  for (size_t q = 0; q < sizeof queries / sizeof *queries; ++q) {
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {  /* OpenCL only in the child: CUDA does not survive a fork */
      cl_platform_id platform;
      clGetPlatformIDs(1, &platform, NULL);
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL);
      context = clCreateContext(NULL, 1, &device, NULL, NULL, NULL);
      cl_program program = build(length);
      query(queries[q], program);
      clReleaseProgram(program);
      for (int more = 0; more < 4; ++more) clReleaseProgram(build(40 + more));
      clReleaseContext(context);
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status)) printf("%s died (signal %d)\n", queries[q], WTERMSIG(status));
    else printf("%s %s (exit %d)\n", queries[q], WEXITSTATUS(status) ? "failed" : "ok", WEXITSTATUS(status));
  }
  return 0;
}
