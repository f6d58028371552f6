# The apps bench/next_run.sh and bench/cold_cpu.sh run (sourced after common.sh): BENCH_APPS picks
# them by name; `apps` holds "name=command line" for each.
apps_dir=$repo/tests/apps
declare -A command=(
  [example]="$build/examples/opencl/opencl_example --kernels $repo/examples/opencl/kernels"
  [many100]="/usr/bin/python3 $repo/tests/integration/apps/pyopencl_many_programs.py 100"
  [many30]="/usr/bin/python3 $repo/tests/integration/apps/pyopencl_many_programs.py 30"
  [pyopencl]="/usr/bin/python3 $apps_dir/pyopencl_array_app.py"
  [opencv]="/usr/bin/python3 $apps_dir/opencv_umat_app.py"
  [clblast]="/usr/bin/clblast_test_xscal"
  [hashcat]="/usr/bin/hashcat --session=jitcache-next-run-$$ -m 0 -a 0 --potfile-disable --quiet --backend-ignore-cuda --backend-ignore-hip -O -w 1 $apps_dir/hashcat/md5.hash $apps_dir/hashcat/words.txt"
)
apps=()
for name in ${BENCH_APPS:-example many100 pyopencl opencv clblast hashcat}; do apps+=("$name=${command[$name]}"); done
