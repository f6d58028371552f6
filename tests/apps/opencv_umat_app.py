"""An OpenCV UMat pipeline for the apps suite (OPENCV_OPENCL_DEVICE=:CPU:,
OPENCV_OPENCL_CACHE_ENABLE=0): cvtColor, GaussianBlur, resize, Canny and morphology on a
synthetic image, each an OpenCL program OpenCV builds from source. Prints a digest of each result."""
import hashlib
import sys

import cv2
import numpy as np

if not cv2.ocl.haveOpenCL():
    sys.exit("OpenCV sees no OpenCL device")
cv2.ocl.setUseOpenCL(True)

rows, cols = np.mgrid[0:240, 0:320]
image = np.dstack([(rows * 3 + cols) % 256, (rows * cols) % 256, (cols * 5) % 256]).astype(np.uint8)
src = cv2.UMat(image)
gray = cv2.cvtColor(src, cv2.COLOR_BGR2GRAY)
blurred = cv2.GaussianBlur(gray, (5, 5), 1.2)
small = cv2.resize(blurred, (160, 120), interpolation=cv2.INTER_LINEAR)
edges = cv2.Canny(small, 50, 150)
kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3))
closed = cv2.morphologyEx(edges, cv2.MORPH_CLOSE, kernel)
dilated = cv2.dilate(small, kernel)

for name, result in [("gray", gray), ("blurred", blurred), ("small", small), ("edges", edges),
                     ("closed", closed), ("dilated", dilated)]:
    data = result.get()
    print("%s %s %s" % (name, data.shape, hashlib.sha256(data.tobytes()).hexdigest()[:16]))
print("opencl used: %s" % cv2.ocl.useOpenCL())
print("all results correct")
