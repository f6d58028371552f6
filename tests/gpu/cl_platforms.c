/* cl_platforms: print the OpenCL platforms and devices the ICD loader sees, one line each:
 *   platform<TAB><index><TAB><name><TAB><version><TAB><device count>
 *   device<TAB><platform index>.<device index><TAB><name><TAB><device version><TAB><driver version>
 * Exit status: 0 when at least one platform was found, 1 when none, 2 on an OpenCL error.
 * Used by tests/gpu/run_cts.sh to check that only the expected driver is listed; built into the
 * CTS carry folder by tests/gpu/build_cts.sh (it links libOpenCL.so.1 only). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static void info_str(cl_platform_id p, cl_platform_info what, char *buf, size_t n)
{
    buf[0] = 0;
    if (clGetPlatformInfo(p, what, n, buf, NULL) != CL_SUCCESS) snprintf(buf, n, "?");
    buf[n - 1] = 0;
}

static void dev_str(cl_device_id d, cl_device_info what, char *buf, size_t n)
{
    buf[0] = 0;
    if (clGetDeviceInfo(d, what, n, buf, NULL) != CL_SUCCESS) snprintf(buf, n, "?");
    buf[n - 1] = 0;
}

int main(void)
{
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && np == 0)) {
        printf("platforms\t0\n");
        return 1;
    }
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clGetPlatformIDs failed: %d\n", err);
        return 2;
    }
    cl_platform_id *ps = calloc(np, sizeof *ps);
    if (!ps || clGetPlatformIDs(np, ps, NULL) != CL_SUCCESS) {
        fprintf(stderr, "clGetPlatformIDs failed\n");
        return 2;
    }
    printf("platforms\t%u\n", np);
    for (cl_uint i = 0; i < np; i++) {
        char name[512], version[512];
        info_str(ps[i], CL_PLATFORM_NAME, name, sizeof name);
        info_str(ps[i], CL_PLATFORM_VERSION, version, sizeof version);
        cl_uint nd = 0;
        if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS) nd = 0;
        printf("platform\t%u\t%s\t%s\t%u\n", i, name, version, nd);
        if (nd == 0) continue;
        cl_device_id *ds = calloc(nd, sizeof *ds);
        if (!ds || clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, nd, ds, NULL) != CL_SUCCESS) {
            free(ds);
            continue;
        }
        for (cl_uint j = 0; j < nd; j++) {
            char dname[512], dver[512], drv[512];
            dev_str(ds[j], CL_DEVICE_NAME, dname, sizeof dname);
            dev_str(ds[j], CL_DEVICE_VERSION, dver, sizeof dver);
            dev_str(ds[j], CL_DRIVER_VERSION, drv, sizeof drv);
            printf("device\t%u.%u\t%s\t%s\t%s\n", i, j, dname, dver, drv);
        }
        free(ds);
    }
    free(ps);
    return 0;
}
