#!/usr/bin/env bash
# mpiexec-like front end of smpirun for ovl's SMPI build.
# usage: smpi/smpirun.sh [-np|-n N] [--flowcap RATE] [--sumrate RATE] [--mech FILE] PROGRAM [ARGS...]
#        smpi/smpirun.sh --version
# Environment:
#   OVL_SMPI_PLATFORM  platform XML (default: a Stampede2-like 64 x 48 cluster, made on first use)
#   OVL_SMPI_HOSTFILE  hostfile (default: the platform's nodes, ranks filled node by node, OVL_SMPI_PPN per node)
#   OVL_SMPI_PPN       ranks per node for the default hostfile (default 48)
#   OVL_SMPI_FLOWCAP   per-flow bandwidth cap, e.g. 2.4GBps (also --flowcap RATE): the
#                      uniform-latency platform stampede2flat with TCP-gamma set so that
#                      every inter-node message stream gets at most RATE (docs/guides/smpi.md)
#   OVL_SMPI_SUMRATE   the reductions' arithmetic, in bytes/s (also --sumrate RATE, e.g. 1.62GBps):
#                      every sum in ovl's own collectives costs its bytes at this rate of the
#                      summing rank's simulated time (docs/guides/smpi.md)
#   OVL_SMPI_MECH      a file of fitted mechanisms (also --mech FILE; smpi/platforms/mech.env,
#                      written by smpi/fit_mech.py): NHALF (smpi/bw-factor s / (s + NHALF)),
#                      OVERHEAD (smpi/os and smpi/ois, seconds per message), COPYRATE and
#                      SUMRATE (per rank, bytes/s) and NODEMEM (the node's memory, bytes/s,
#                      shared by its ranks' sums and copies) on the platform stampede2mech
#                      (docs/guides/smpi.md, "Mechanisms"); the variables of the file may be
#                      overridden one by one as OVL_MECH_<NAME>
#   OVL_SMPI_NET       ideal (default: latency and bandwidth factors 1) or halfbw (large messages at half rate)
#   OVL_SMPI_CFG       more smpirun options (--cfg=...)
#   OVL_SMPI_FLOPS     real (default) or skip: see docs/guides/smpi.md
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
np=""
flowcap=${OVL_SMPI_FLOWCAP:-}
mech=${OVL_SMPI_MECH:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --version | -version) echo "SimGrid SMPI ($(smpirun -version 2>/dev/null | head -1)) via ovl smpi/smpirun.sh"; exit 0 ;;
    -np | -n) np=$2; shift 2 ;;
    --flowcap) flowcap=$2; shift 2 ;;
    --mech) mech=$2; shift 2 ;;
    --sumrate)
      OVL_SMPI_SUMRATE=$(python3 "$here/platforms/make_platforms.py" rate "$2") || exit 2
      export OVL_SMPI_SUMRATE; shift 2 ;;
    --oversubscribe | --bind-to) [ "$1" = --bind-to ] && shift; shift ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: $0 [-np N] PROGRAM [ARGS...]" >&2; exit 2; }
prog=$1; shift
ppn=${OVL_SMPI_PPN:-48}
ppn_m=$ppn
work=${OVL_SMPI_WORK:-${TMPDIR:-/tmp}/ovl-smpi-$(id -u)}
mkdir -p "$work"
platform=${OVL_SMPI_PLATFORM:-}
hostfile=${OVL_SMPI_HOSTFILE:-}
gamma=""
if [ -n "$flowcap" ] && [ -n "$platform" ]; then
  echo "$0: the flow cap needs the default platform (stampede2flat), not OVL_SMPI_PLATFORM" >&2; exit 2
fi
mcfg=()
if [ -n "$mech" ]; then
  [ -z "$flowcap" ] && [ -z "$platform" ] || { echo "$0: --mech needs the default platform and no --flowcap" >&2; exit 2; }
  [ -r "$mech" ] || { echo "$0: --mech: cannot read '$mech'" >&2; exit 2; }
  NHALF=0 OVERHEAD=0 COPYRATE=0 SUMRATE=0 NODEMEM=0
  # shellcheck disable=SC1090
  . "$mech"
  NHALF=${OVL_MECH_NHALF:-$NHALF} OVERHEAD=${OVL_MECH_OVERHEAD:-$OVERHEAD} COPYRATE=${OVL_MECH_COPYRATE:-$COPYRATE}
  SUMRATE=${OVL_MECH_SUMRATE:-$SUMRATE} NODEMEM=${OVL_MECH_NODEMEM:-$NODEMEM}
  export OVL_SMPI_SUMRATE=$SUMRATE OVL_SMPI_COPYRATE=$COPYRATE OVL_SMPI_NODEMEM=$NODEMEM
  if awk -v x="$NHALF" 'BEGIN { exit !(x > 0) }'; then
    mcfg+=(--cfg=smpi/bw-factor:"$(python3 "$here/platforms/make_platforms.py" bwfactor "$NHALF")")
  fi
  mcfg+=(--cfg=smpi/os:"0:$OVERHEAD:0" --cfg=smpi/ois:"0:$OVERHEAD:0")
  np=${np:-1}
  nodes=$(( (np + ppn_m - 1) / ppn_m )); [ "$nodes" -lt 64 ] && nodes=64
  nodes=$(( (nodes + 7) / 8 * 8 ))
  if awk -v x="$NODEMEM" 'BEGIN { exit !(x > 0) }'; then
    name=$(python3 "$here/platforms/make_platforms.py" stampede2mech "$work" --nodes "$nodes" --ppn "$ppn_m" \
      --ranks "$np" --nodemem "$NODEMEM")
  else
    name=$(python3 "$here/platforms/make_platforms.py" stampede2flat "$work" --nodes "$nodes" --ppn "$ppn_m" --ranks "$np")
  fi
  platform=$work/$name.xml
  hostfile=${hostfile:-$work/${name}_ppn${ppn_m}_${np}.hostfile}
fi
if [ -z "$platform" ]; then
  np=${np:-1}
  nodes=$(( (np + ppn - 1) / ppn )); [ "$nodes" -lt 64 ] && nodes=64
  nodes=$(( (nodes + 7) / 8 * 8 ))
  if [ -n "$flowcap" ]; then
    read -r name gamma < <(python3 "$here/platforms/make_platforms.py" stampede2flat "$work" --nodes "$nodes" \
      --ppn "$ppn" --ranks "$np" --flowcap "$flowcap")
    [ -n "$gamma" ] || exit 2
  else
    name=$(python3 "$here/platforms/make_platforms.py" stampede2 "$work" --nodes "$nodes" --ppn "$ppn" --ranks "$np")
  fi
  platform=$work/$name.xml
  hostfile=${hostfile:-$work/${name}_ppn${ppn}_${np}.hostfile}
fi
[ -n "$hostfile" ] || { echo "$0: OVL_SMPI_PLATFORM given without OVL_SMPI_HOSTFILE" >&2; exit 2; }
# SimGrid settings (docs/guides/smpi.md): computation only as injected flops; MPI_Test
# and MPI_Iprobe nearly free (the default 1e-4 s per call would dominate a
# progress loop; 0 can hang); latency and bandwidth factors 1 (ideal) or the
# halved bandwidth.
cfg=(--cfg=smpi/simulate-computation:no --cfg=smpi/test:1e-9 --cfg=smpi/iprobe:1e-9
     --cfg=smpi/lat-factor:0:1 --cfg=smpi/async-small-thresh:0 --cfg=smpi/send-is-detached-thresh:65536
     --cfg=smpi/shared-malloc-blocksize:2097152 --cfg=contexts/factory:raw --cfg=smpi/display-timing:no)
case "${OVL_SMPI_NET:-ideal}" in
  ideal) [ ${#mcfg[@]} -gt 0 ] && [ -n "$mech" ] && awk -v x="${NHALF:-0}" 'BEGIN { exit !(x > 0) }' ||
           cfg+=(--cfg=smpi/bw-factor:0:1) ;;
  halfbw) cfg+=(--cfg=smpi/bw-factor:"0:1;65536:0.5") ;; # every large message at half the link rate
  *) echo "$0: OVL_SMPI_NET must be ideal or halfbw" >&2; exit 2 ;;
esac
# The flow cap: SimGrid bounds a flow's rate by TCP-gamma / (2 x route
# latency); every inter-node route of stampede2flat has the same latency.
[ -n "$gamma" ] && cfg+=(--cfg=network/TCP-gamma:"$gamma")
# shellcheck disable=SC2206
extra=("${mcfg[@]}" ${OVL_SMPI_CFG:-})
args=(-platform "$platform" -hostfile "$hostfile")
[ -n "$np" ] && args+=(-np "$np")
exec smpirun "${args[@]}" "${cfg[@]}" "${extra[@]}" --log=root.thresh:warning --log=smpi_config.thres:warning "$prog" "$@"
