#!/usr/bin/env bash
# Captures for issue 51 (how far each op is from its limit) and part of issue 50 (the what-if replay's
# calibration and Kineto traces of its pairs), on the GPU machine (nvidia-h200). Run from the repository root
# there, with .devicelibs carried (nsys needs its libdw/libelf):
#
#   bash workloads/op_limits/capture.sh OUT_DIR [JOB...]
#
# JOBs, in the default order (the most important first):
#   smoke        what the captures job does not exercise: a new program under Kineto (transformer, tiny), the
#                calibration (--quick), and ncu --query-metrics --chip gh100 (is each EXTRA_METRICS name listed?)
#   captures     the nsys captures (with shapes, --iters 5) of mlp_train fp32 and bf16, matmul x4, transformer, conv
#                and elementwise eager: what ncu_top3.py needs to plan the ncu job, so they come first
#   calibrate    workloads/whatif_calibration/calibrate.py three times
#   mlp          workloads/clock/mlp_train.py --dtype fp32 | bf16           } each a set of variants: plain runs
#   elementwise  workloads/clock/elementwise.py --mode eager | compiled     } A B A B A B (default sizes and
#   matmul       workloads/op_limits/matmul.py --dtype fp32 | tf32 | bf16 | fp8   } iterations), then each variant
#   transformer  workloads/op_limits/transformer.py                         } under nsys with shapes (--iters 5)
#   conv         workloads/op_limits/conv.py                                } unless captures made it, then under
#                Kineto (--iters 5; 3 for the transformer). elementwise --mode compiled is captured here, after
#                its plain runs: Inductor's caches are warm then (a cold compile under nsys makes a large export)
#   kineto_pairs Kineto traces of issue 50's pairs: decode eager | graph (--iters 16), item_sync --item | --noitem,
#                input_loop pageable | pinned, numpy_prep --workers 0 | 6 (--iters 10); mlp_train and
#                elementwise's come from their own jobs
#   tracer       workloads/clock/tracer_cost.py --k 5000 --reps 2 --warmup 1000 plain, under nsys +
#                --pytorch=autograd-nvtx, under nsys + --pytorch=autograd-shapes-nvtx (what shapes cost per op range)
#   tracer2      the same three in reverse order
#   ncu          (only when named) ncu on the top 3 kernels of each program, with the argv `ncuwrap profile --top 3
#                --metrics EXTRA_METRICS` gives; it needs the kernel ids from the captures (see below); an
#                elementwise --mode compiled run first fills Inductor's caches on a fresh machine
#   kineto_fp8, conv_rest  (only when named) what the first call did not reach: matmul --dtype fp8 under Kineto;
#                conv's plain runs and Kineto trace without a second nsys capture
#
# tests/data/h200_ncuwrap/op_limits/ came from three calls (its README has the details):
#   DEADLINE_S=520 bash workloads/op_limits/capture.sh OUT      # reached smoke .. matmul (Kineto bf16), then the call's limit
#   python3 workloads/op_limits/ncu_top3.py ...                 # here: the NCU_TOP3 block below
#   DEADLINE_S=235 bash workloads/op_limits/capture.sh OUT ncu kineto_fp8 transformer conv kineto_pairs tracer tracer2
#   DEADLINE_S=30 bash workloads/op_limits/capture.sh OUT conv_rest
# A capture NAME is exactly ncuwrap's nsys command with the op ranges' shapes:
#   CLOCK_TRACED=nsys-shapes nsys profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node
#        --pytorch=autograd-shapes-nvtx -o NAME --force-overwrite true -- python3 PROGRAM ARGS --iters 5
#   nsys export --type sqlite --force-overwrite true --output NAME.sqlite NAME.nsys-rep; gzip -9 -n NAME.sqlite
# A Kineto trace NAME is `CLOCK_TRACED=kineto-shapes-stack python3 PROGRAM ARGS --iters K --kineto NAME.pt.trace.json.gz`
# (clock.py: torch.profiler around the timed loop, record_shapes and with_stack). Each log holds the command
# (lines starting '# ') and everything printed. A job is started only while the script has run less than
# DEADLINE_S seconds (default 450; the ncu job also checks it before each program); skipped jobs are logged.
# No `set -e` (workloads/common/preamble.sh): every exit code is logged and the rest goes on. What comes back (at most 8 files): OUT_DIR/{early,pairs,matmul,nets,extra,ncu}.tar (the jobs' folders)
# and OUT_DIR/meta.tar (env.txt, clock.log, plain.jsonl, captured.jsonl, kineto.jsonl, calibrate.jsonl,
# tracer_cost.jsonl, smoke.jsonl, ncu.jsonl, warm.jsonl), re-packed after every run.
#
# The ncu job's kernel ids: ncuwrap's own functions (ncuwrap.profile.pipeline.steady_times, top.plan,
# ncu_argv, collection.plan_collection), run on this script's nsys captures by workloads/op_limits/ncu_top3.py
# on a machine with ncuwrap installed, which prints the NCU_* lines below (between the markers).
out=${1:?usage: capture.sh OUT_DIR [JOB...]}
shift
jobs=("$@")
[[ ${#jobs[@]} -eq 0 ]] && jobs=(smoke captures calibrate mlp elementwise matmul transformer conv kineto_pairs tracer tracer2)
mkdir -p "$out"
out=$(cd "$out" && pwd)
ncu_given=${NCU:-}
# The shared set-up (set -uo pipefail, the carried wheels, PYTHONPATH, PYTHONUNBUFFERED, LD_LIBRARY_PATH, NSYS, the
# work folder W=/tmp/op_limits_work, made empty) and job loop (run_jobs: a deadline per job, each logged and packed);
# this script keeps its own log lines and packing (below: the fixture's README quotes them) and its own ncu (the one
# on PATH).
OUT=$out
. workloads/common/preamble.sh op_limits_work
nsys=$NSYS
NCU=${ncu_given:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
unset CLOCK_TRACED
deadline=${DEADLINE_S:-450}
work=$W
C=${CLOCK_PROGRAMS:-workloads/clock}   # the programs (overridable only to test this script with stubs)
O=${OP_PROGRAMS:-workloads/op_limits}
CAL=${CAL_PROGRAM:-workloads/whatif_calibration/calibrate.py}
mkdir -p "$work/keep/meta" "$work/raw"
meta=$work/keep/meta
t_start=$(date +%s.%N)
log() { echo "[$(elapsed "$t_start")s $(date -u +%T)] $*" | tee -a "$meta/clock.log"; }
json_of() { grep -a '^{"program"' "$1" | tail -n 1; }   # the program's JSON line in a log
step_of() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("step_ms_mean", "-") if sys.argv[1] else "none")' "$1"; }

# The metrics added to ncuwrap's targeted collection (ncuwrap profile --metrics): FLOPs from the SASS thread
# instruction counts (FP32, FP16, FP64), tensor-core instructions, and the bytes through L2 (and its hit rate).
# The tensor-core op counts by input type and dram__bytes_{read,write}.sum are in the targeted collection already.
EXTRA_METRICS=smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__inst_executed_pipe_tensor_op_hmma.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum

# ncuwrap's capture command with the op ranges' shapes; should this nsys not know the option, the op ranges alone
# (said in env.txt and clock.log, and the captures' JSON lines say CLOCK_TRACED=nsys-noshapes)
pytorch_opt=autograd-shapes-nvtx capture_label=nsys-shapes
if ! "$nsys" profile --help 2>&1 | grep -q autograd-shapes-nvtx &&
   ! "$nsys" profile --trace=nvtx --sample=none --cpuctxsw=none --pytorch=autograd-shapes-nvtx -o "$work/raw/probe" \
       --force-overwrite true -- true > "$work/raw/probe.log" 2>&1; then
  pytorch_opt=autograd-nvtx capture_label=nsys-noshapes
fi

{
  echo "date: $(date -u)"
  echo "captures: nsys --pytorch=$pytorch_opt"
  nvidia-smi -q | head -40
  nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv
  "$nsys" --version
  echo "ncu: $NCU"; "$NCU" --version
  python3 -c 'import torch, numpy, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "numpy", numpy.__version__, "python", sys.version.split()[0])'
  python3 -c 'import triton; print("triton", triton.__version__)'
  echo "nproc: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
  free -g | head -2
  uname -sr
} > "$meta/env.txt" 2>&1
cat "$meta/env.txt"

group_of() {
  case $1 in
    smoke|calibrate) echo early ;;
    mlp|elementwise) echo pairs ;;
    matmul|kineto_fp8) echo matmul ;;
    transformer|conv|conv_rest) echo nets ;;
    kineto_pairs|tracer|tracer2) echo extra ;;
    ncu) echo ncu ;;
    *) echo other ;;
  esac
}

pack() {
  local g dirs j
  for g in early pairs matmul nets extra ncu; do
    dirs=()
    for j in "$work"/keep/*/; do
      j=$(basename "$j")
      [[ $j != meta && $(group_of "$j") == "$g" ]] && dirs+=("$j")
    done
    [[ ${#dirs[@]} -gt 0 ]] && tar -C "$work/keep" -cf "$out/$g.tar" "${dirs[@]}"
  done
  tar -C "$work/keep" -cf "$out/meta.tar" meta
}

capture() {  # capture JOB NAME PROGRAM [ARGS...]: ncuwrap's nsys command with shapes, exported, gzipped
  local job=$1 name=$2; shift 2
  local d=$work/keep/$job rep=$work/raw/$name
  mkdir -p "$d"
  local cmd=("$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node
             --pytorch=$pytorch_opt -o "$rep" --force-overwrite true -- python3 "$@")
  echo "# CLOCK_TRACED=$capture_label ${cmd[*]}" > "$d/$name.log"
  local s rc line
  s=$(date +%s.%N)
  CLOCK_TRACED=$capture_label timeout 240 "${cmd[@]}" >> "$d/$name.log" 2>&1
  rc=$?
  line=$(json_of "$d/$name.log")
  log "capture $name rc=$rc wall=$(elapsed "$s")s step_ms_mean=$(step_of "$line")"
  [[ -n $line ]] && echo "$line" >> "$meta/${captured_jsonl:-captured.jsonl}"
  [[ $rc -ne 0 ]] && tail -n 15 "$d/$name.log"
  if [[ ! -f $rep.nsys-rep ]]; then log "no $name.nsys-rep: $(ls "$work/raw" | tr '\n' ' ')"; return; fi
  local ecmd=("$nsys" export --type sqlite --force-overwrite true --output "$rep.sqlite" "$rep.nsys-rep")
  echo "# ${ecmd[*]}" >> "$d/$name.log"
  s=$(date +%s.%N)
  timeout 180 "${ecmd[@]}" >> "$d/$name.log" 2>&1
  rc=$?
  echo "# export exit $rc" >> "$d/$name.log"
  local sq; sq=$(stat -c %s "$rep.sqlite" 2>/dev/null)
  gzip -9 -n -c "$rep.sqlite" > "$d/$name.sqlite.gz" 2>/dev/null || rm -f "$d/$name.sqlite.gz"
  log "export $name rc=$rc wall=$(elapsed "$s")s rep=$(stat -c %s "$rep.nsys-rep") sqlite=$sq gz=$(stat -c %s "$d/$name.sqlite.gz" 2>/dev/null)"
  rm -f "$rep.nsys-rep" "$rep.sqlite" "$rep.qdstrm"
}

kineto() {  # kineto JOB NAME PROGRAM [ARGS...]: the timed loop under torch.profiler (shapes, stacks)
  local job=$1 name=$2; shift 2
  local d=$work/keep/$job
  mkdir -p "$d"
  local trace=$d/$name.pt.trace.json.gz
  echo "# CLOCK_TRACED=kineto-shapes-stack python3 $* --kineto $trace" > "$d/$name.kineto.log"
  local s rc line
  s=$(date +%s.%N)
  CLOCK_TRACED=kineto-shapes-stack timeout 240 python3 "$@" --kineto "$trace" >> "$d/$name.kineto.log" 2>&1
  rc=$?
  line=$(json_of "$d/$name.kineto.log")
  [[ -n $line ]] && echo "$line" >> "$meta/${kineto_jsonl:-kineto.jsonl}"
  log "kineto $name rc=$rc wall=$(elapsed "$s")s step_ms_mean=$(step_of "$line") trace=$(stat -c %s "$trace" 2>/dev/null)"
  [[ $rc -ne 0 ]] && tail -n 15 "$d/$name.kineto.log"
  pack
}

plain() {  # plain JOB NAME RUN PROGRAM [ARGS...]
  local job=$1 name=$2 run=$3; shift 3
  local d=$work/keep/$job/plain
  mkdir -p "$d"
  local s rc line
  s=$(date +%s.%N)
  { echo "# python3 $*"; timeout 240 python3 "$@"; } > "$d/$name.$run.log" 2>&1
  rc=$?
  line=$(json_of "$d/$name.$run.log")
  [[ -n $line ]] && echo "$line" >> "$meta/plain.jsonl"
  log "plain $name run $run rc=$rc wall=$(elapsed "$s")s step_ms_mean=$(step_of "$line")"
  [[ $rc -ne 0 ]] && tail -n 15 "$d/$name.$run.log"
  pack
}

traced_run() {  # traced_run JOB NAME TRACED_LABEL JSONL COMMAND...: one run, its JSON line to JSONL
  local job=$1 name=$2 label=$3 jsonl=$4; shift 4
  local d=$work/keep/$job
  mkdir -p "$d"
  echo "# CLOCK_TRACED=$label $*" > "$d/$name.log"
  local s rc line
  s=$(date +%s.%N)
  CLOCK_TRACED=$label timeout 240 "$@" >> "$d/$name.log" 2>&1
  rc=$?
  line=$(json_of "$d/$name.log")
  [[ -n $line ]] && echo "$line" >> "$meta/$jsonl"
  log "run $name ($label) rc=$rc wall=$(elapsed "$s")s"
  [[ $rc -ne 0 ]] && tail -n 15 "$d/$name.log"
  rm -f "$work/raw/$name".nsys-rep "$work/raw/$name".qdstrm
  pack
}

variants() {  # variants JOB PROGRAM KINETO_ITERS NAME "ARGS" [NAME "ARGS" ...]: plain x3 interleaved, nsys, Kineto
  local job=$1 prog=$2 ki=$3; shift 3
  local names=() argss=() r i
  while (( $# )); do names+=("$1"); argss+=("$2"); shift 2; done
  for r in 1 2 3; do
    for i in "${!names[@]}"; do plain "$job" "${names[$i]}" "$r" "$prog" ${argss[$i]}; done
  done
  for i in "${!names[@]}"; do  # the captures job may have made it already
    [[ -f $work/keep/$job/${names[$i]}.log ]] || { capture "$job" "${names[$i]}" "$prog" ${argss[$i]} --iters 5; pack; }
  done
  for i in "${!names[@]}"; do kineto "$job" "${names[$i]}" "$prog" ${argss[$i]} --iters "$ki"; done
}

nsys_plain=("$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none)

smoke() {  # the paths the captures job does not take: a new program under Kineto, the calibration; the metric names
  local d=$work/keep/smoke; mkdir -p "$d"
  local captured_jsonl=smoke.jsonl kineto_jsonl=smoke.jsonl   # capture() and kineto() write their JSON lines there
  kineto smoke transformer_tiny $O/transformer.py --layers 1 --dim 256 --heads 4 --seq 128 --batch 2 --vocab 512 --iters 2 --warmup 1
  traced_run smoke calibrate_quick smoke smoke.jsonl python3 $CAL --quick
  "$NCU" --query-metrics --chip gh100 > "$d/query_metrics.txt" 2>&1
  log "ncu --query-metrics rc=$? lines=$(wc -l < "$d/query_metrics.txt")"
  local m missing=""
  for m in ${EXTRA_METRICS//,/ }; do
    grep -q "^${m%.*} " "$d/query_metrics.txt" || missing="$missing ${m%.*}"
  done
  log "EXTRA_METRICS base names not listed by --query-metrics:${missing:- none}"
}

# >>> NCU_TOP3 (written by workloads/op_limits/ncu_top3.py from the captures' ncuwrap plans; do not edit by hand)
NCU_COLLECT=(--section LaunchStats --section Occupancy --metrics sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed,lts__d_sectors.avg.pct_of_peak_sustained_elapsed,lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed,lts__xbar2lts_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_tensor_op_gmma.sum.pct_of_peak_sustained_elapsed,sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_tex.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_cbu.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_elapsed,sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__ops_path_tensor_src_bf16_dst_fp32.sum,sm__ops_path_tensor_src_fp16.sum,sm__ops_path_tensor_src_tf32_dst_fp32.sum,sm__ops_path_tensor_src_fp8_sparsity_off.sum,sm__ops_path_tensor_src_fp64.sum,sm__ops_path_tensor_src_int8.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained,sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained,sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained,sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained,sm__ops_path_tensor_src_fp64.sum.peak_sustained,sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum.peak_sustained,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum,sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum,smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct,l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum,l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio,lts__t_requests_srcunit_tex_op_write.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_local_op_st.sum,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed,lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__mio_pq_read_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed,smsp__cycles_elapsed.avg.per_second,dram__bytes.sum.per_second,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed,sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained,sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained,dram__bytes.sum.peak_sustained,dram__cycles_elapsed.avg.per_second,lts__t_sectors.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,sm__inst_executed_pipe_tensor_op_gmma.sum,sm__inst_executed_pipe_tensor_op_hmma.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct)
NCU_RUNS=(
  'conv '"'"'::regex:^(sm90_xmma_wgrad_indexed_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize256x128x64_warpgroupsize2x1x1_g1_execute_segment_k_on_kernel__5x_cudnn|sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn|sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn)$:3'"'"' workloads/op_limits/conv.py --iters 5'
  'elementwise_compiled '"'"'::regex:^(triton_red_fused__softmax_abs_add_clamp_div_exp_gelu_mean_mul_neg_prepare_softmax_online_rsqrt_sigmoid_silu_sub_sum_tanh_0|_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIiEESt5arrayIPcLm1EEEEviT0_T1_)$:2'"'"' workloads/clock/elementwise.py --mode compiled --iters 5'
  'elementwise_eager '"'"'::regex:^(_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_15CUDAFunctor_addIfEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_|_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_|_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_)$:7'"'"' workloads/clock/elementwise.py --mode eager --iters 5'
  'matmul_bf16 '"'"'::regex:^(nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT)$:2'"'"' workloads/op_limits/matmul.py --dtype bf16 --iters 5'
  'matmul_fp32 '"'"'::regex:^(sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas)$:2'"'"' workloads/op_limits/matmul.py --dtype fp32 --iters 5'
  'matmul_fp8 '"'"'::regex:^(nvjet_sm90_qqtst_144x128_128x6_1x2_h_bz_coopA_algo2_TNN)$:2'"'"' workloads/op_limits/matmul.py --dtype fp8 --iters 5'
  'matmul_tf32 '"'"'::regex:^(sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas)$:2'"'"' workloads/op_limits/matmul.py --dtype tf32 --iters 5'
  'mlp_train_bf16 '"'"'::regex:^(nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT|nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT|nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN)$:5'"'"' workloads/clock/mlp_train.py --dtype bf16 --iters 5'
  'mlp_train_fp32 '"'"'::regex:^(sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas|sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas|_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_128x256_8x4_nt_align1EEvNT_6ParamsE)$:3'"'"' workloads/clock/mlp_train.py --dtype fp32 --iters 5'
  'transformer '"'"'::regex:^(nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT|nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT|cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0)$:18'"'"' workloads/op_limits/transformer.py --iters 5'
)
# <<< NCU_TOP3

ncu_one() {  # ncu_one NAME KERNEL_ID PROGRAM [ARGS...]: `ncuwrap profile --top 3`'s ncu argv, then its two CSV exports
  local name=$1 kid=$2; shift 2
  local d=$work/keep/ncu rep=$work/raw/ncu_$name
  mkdir -p "$d"
  local cmd=("$NCU" --export "$rep" --clock-control none --kernel-name-base mangled --kernel-id "$kid" "${NCU_COLLECT[@]}" python3 "$@")
  echo "# ${cmd[*]}" > "$d/$name.log"
  local s rc line
  s=$(date +%s.%N)
  CLOCK_TRACED=ncu timeout 300 "${cmd[@]}" >> "$d/$name.log" 2>&1
  rc=$?
  line=$(json_of "$d/$name.log")
  [[ -n $line ]] && echo "$line" >> "$meta/ncu.jsonl"
  log "ncu $name rc=$rc wall=$(elapsed "$s")s rep=$(stat -c %s "$rep.ncu-rep" 2>/dev/null) $(grep -c '^==PROF== Profiling' "$d/$name.log") launches profiled"
  [[ $rc -ne 0 ]] && tail -n 15 "$d/$name.log"
  "$NCU" --import "$rep.ncu-rep" --csv --page raw 2>> "$d/$name.log" | gzip -9 -n > "$d/$name.raw.csv.gz"
  "$NCU" --import "$rep.ncu-rep" --csv --page raw --print-kernel-base mangled --metrics launch__grid_size > "$d/$name.mangled.csv" 2>> "$d/$name.log"
  local size; size=$(stat -c %s "$rep.ncu-rep" 2>/dev/null || echo 0)
  (( size > 0 && size < 6000000 )) && gzip -9 -n -c "$rep.ncu-rep" > "$d/$name.ncu-rep.gz"
  log "ncu $name exports: raw.csv.gz=$(stat -c %s "$d/$name.raw.csv.gz" 2>/dev/null) mangled=$(stat -c %s "$d/$name.mangled.csv" 2>/dev/null)"
  rm -f "$rep.ncu-rep"
  pack
}

run_job() {
  case $1 in
    smoke) smoke ;;
    captures)  # the nsys captures ncu_top3.py needs, before everything else (elementwise --mode compiled: its job, once warm)
      capture mlp mlp_train_fp32 $C/mlp_train.py --dtype fp32 --iters 5
      capture mlp mlp_train_bf16 $C/mlp_train.py --dtype bf16 --iters 5
      capture matmul matmul_fp32 $O/matmul.py --dtype fp32 --iters 5
      capture matmul matmul_tf32 $O/matmul.py --dtype tf32 --iters 5
      capture matmul matmul_bf16 $O/matmul.py --dtype bf16 --iters 5
      capture matmul matmul_fp8 $O/matmul.py --dtype fp8 --iters 5
      capture transformer transformer $O/transformer.py --iters 5
      capture conv conv $O/conv.py --iters 5
      capture elementwise elementwise_eager $C/elementwise.py --mode eager --iters 5
      ;;
    calibrate)
      local r
      for r in 1 2 3; do traced_run calibrate calibrate.$r "" calibrate.jsonl python3 $CAL; done
      ;;
    mlp) variants mlp $C/mlp_train.py 5 mlp_train_fp32 "--dtype fp32" mlp_train_bf16 "--dtype bf16" ;;
    elementwise) variants elementwise $C/elementwise.py 5 elementwise_eager "--mode eager" elementwise_compiled "--mode compiled" ;;
    matmul) variants matmul $O/matmul.py 5 matmul_fp32 "--dtype fp32" matmul_tf32 "--dtype tf32" matmul_bf16 "--dtype bf16" \
              matmul_fp8 "--dtype fp8" ;;
    kineto_fp8)  # the one Kineto trace of the matmul job that call 1 did not reach
      kineto matmul matmul_fp8 $O/matmul.py --dtype fp8 --iters 5 ;;
    transformer) variants transformer $O/transformer.py 3 transformer "" ;;
    conv) variants conv $O/conv.py 5 conv "" ;;
    conv_rest)  # conv's plain runs and Kineto trace without its nsys capture (made by an earlier call's captures job)
      local r
      for r in 1 2 3; do plain conv conv "$r" $O/conv.py; done
      kineto conv conv $O/conv.py --iters 5 ;;
    kineto_pairs)
      kineto kineto_pairs decode_eager $C/decode.py --mode eager --iters 16
      kineto kineto_pairs decode_graph $C/decode.py --mode graph --iters 16
      kineto kineto_pairs item_sync_item $C/item_sync.py --item --iters 10
      kineto kineto_pairs item_sync_noitem $C/item_sync.py --noitem --iters 10
      kineto kineto_pairs input_loop_pageable $C/input_loop.py --mode pageable --iters 10
      kineto kineto_pairs input_loop_pinned $C/input_loop.py --mode pinned --iters 10
      kineto kineto_pairs numpy_prep_workers0 $C/numpy_prep.py --workers 0 --iters 10
      kineto kineto_pairs numpy_prep_workers6 $C/numpy_prep.py --workers 6 --iters 10
      ls -la "$work/keep/kineto_pairs" | tee -a "$meta/clock.log"
      ;;
    tracer|tracer2)  # tracer: plain, nvtx, shapes; tracer2: the same in reverse order
      local tc=$C/tracer_cost.py ta=(--k 5000 --reps 2 --warmup 1000) r cfg order=(plain nvtx shapes)
      [[ $1 == tracer2 ]] && order=(shapes nvtx plain)
      r=0; [[ $1 == tracer2 ]] && r=3
      for cfg in "${order[@]}"; do
        r=$((r + 1))
        case $cfg in
          plain) traced_run tracer "tracer_$r.plain" "" tracer_cost.jsonl python3 $tc "${ta[@]}" ;;
          nvtx) traced_run tracer "tracer_$r.nvtx" nsys-autograd-nvtx tracer_cost.jsonl "${nsys_plain[@]}" --pytorch=autograd-nvtx \
                  -o "$work/raw/tracer_$r.nvtx" --force-overwrite true -- python3 $tc "${ta[@]}" ;;
          shapes) traced_run tracer "tracer_$r.shapes" nsys-autograd-shapes-nvtx tracer_cost.jsonl "${nsys_plain[@]}" \
                    --pytorch=autograd-shapes-nvtx -o "$work/raw/tracer_$r.shapes" --force-overwrite true -- python3 $tc "${ta[@]}" ;;
        esac
      done
      ;;
    ncu)
      if [[ ${#NCU_RUNS[@]} -eq 0 ]]; then log "ncu: no kernel ids yet (run ncu_top3.py on the captures first)"; return; fi
      # Inductor's caches warm first (a fresh machine compiles cold, and its autotuning launches would shift the
      # launch that --kernel-id counts to from the one the warm capture ranked)
      if printf '%s\n' "${NCU_RUNS[@]}" | grep -q 'elementwise.py --mode compiled'; then
        traced_run ncu elementwise_compiled_warm "" warm.jsonl python3 $C/elementwise.py --mode compiled --iters 5
      fi
      local spec
      for spec in "${NCU_RUNS[@]}"; do
        if ! before_deadline "$t_start" "$deadline"; then
          log "ncu run SKIPPED (past ${deadline}s): $spec"; continue
        fi
        eval "ncu_one $spec"
      done
      ;;
    *) log "unknown job $1" ;;
  esac
}

run_jobs "$t_start" "$deadline" "$meta/clock.log" "${jobs[@]}"
