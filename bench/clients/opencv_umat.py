"""An OpenCV image pipeline on UMat (OpenCV's OpenCL path, T-API): blur, colour conversion,
edges, resize, morphology, threshold. Prints a checksum so runs can be compared. OpenCV keeps its
own program cache (OPENCV_OPENCL_CACHE_ENABLE, OPENCV_OPENCL_CACHE_DIR)."""
import sys

import cv2
import numpy as np

cv2.ocl.setUseOpenCL(True)
if not cv2.ocl.haveOpenCL() or not cv2.ocl.useOpenCL():
    sys.exit("opencv_umat: OpenCL is not available to OpenCV")

rng = np.random.default_rng(7)
image = cv2.UMat(rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8))
blurred = cv2.GaussianBlur(image, (7, 7), 1.5)
gray = cv2.cvtColor(blurred, cv2.COLOR_BGR2GRAY)
edges = cv2.Canny(gray, 50, 150)
small = cv2.resize(blurred, (640, 360), interpolation=cv2.INTER_LINEAR)
opened = cv2.morphologyEx(gray, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
_, binary = cv2.threshold(opened, 127, 255, cv2.THRESH_BINARY)
sobel = cv2.Sobel(gray, cv2.CV_16S, 1, 0)
total = sum(int(cv2.sumElems(m)[0]) for m in (edges, small, binary, sobel))
print(f"opencv_umat: checksum {total}")
