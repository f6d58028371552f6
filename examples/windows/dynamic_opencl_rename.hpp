// Force-included (-include) into opencl_example.cpp for its dynamic-loading build: every OpenCL
// call of the unchanged example goes through a pointer from GetProcAddress instead of an import.
#pragma once

#include "dynamic_opencl_functions.hpp"

#define clBuildProgram dynamic_clBuildProgram
#define clCreateBuffer dynamic_clCreateBuffer
#define clCreateCommandQueue dynamic_clCreateCommandQueue
#define clCreateContext dynamic_clCreateContext
#define clCreateKernel dynamic_clCreateKernel
#define clCreateKernelsInProgram dynamic_clCreateKernelsInProgram
#define clCreateProgramWithSource dynamic_clCreateProgramWithSource
#define clEnqueueNDRangeKernel dynamic_clEnqueueNDRangeKernel
#define clEnqueueReadBuffer dynamic_clEnqueueReadBuffer
#define clFinish dynamic_clFinish
#define clGetDeviceIDs dynamic_clGetDeviceIDs
#define clGetKernelInfo dynamic_clGetKernelInfo
#define clGetPlatformIDs dynamic_clGetPlatformIDs
#define clGetProgramBuildInfo dynamic_clGetProgramBuildInfo
#define clReleaseCommandQueue dynamic_clReleaseCommandQueue
#define clReleaseContext dynamic_clReleaseContext
#define clReleaseKernel dynamic_clReleaseKernel
#define clReleaseMemObject dynamic_clReleaseMemObject
#define clReleaseProgram dynamic_clReleaseProgram
#define clSetKernelArg dynamic_clSetKernelArg
