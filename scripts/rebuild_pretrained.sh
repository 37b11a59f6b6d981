#!/usr/bin/env bash
# Issue 54, part 1: rebuild the pre-trained start's run from docs/alphazero.md's commands ("Pre-training on solved
# positions"), then ship it with scripts/make_az_standard.py. Each stage leaves a marker in runs/rebuild/, so running
# this again goes on after the last finished stage (the trainer's own --resume continues a stage it stopped in).
#
#   setsid nohup nice -n 5 bash scripts/rebuild_pretrained.sh >> logs/rebuild.log 2>&1 &
#
# Run from the repository root with .venv set up (make test's set-up). Stops on the first failing stage.
set -euo pipefail
cd "$(dirname "$0")/.."
echo 0 > "/proc/$$/autogroup" 2>/dev/null || true  # under setsid the autogroup, not nice, sets the CPU share (19 starved it; 0)
PY=.venv/bin/python
DONE=runs/rebuild
RUN=runs/az-standard-pretrained
CONFIG=docs/alphazero/pretrain/az-standard-pretrained.yaml
mkdir -p "$DONE" logs

stage() {  # stage NAME COMMAND...: runs COMMAND once, then marks NAME done
  local name=$1
  shift
  if [[ -e "$DONE/$name" ]]; then
    echo "$(date -Is) $name: done before"
    return
  fi
  echo "$(date -Is) $name: $* (load $(cut -d' ' -f1-3 /proc/loadavg))"
  "$@"
  date -Is > "$DONE/$name"
  echo "$(date -Is) $name: finished"
}

resume_flag() {  # the trainer's --resume once the run folder holds a checkpoint
  [[ -f "$RUN/latest.pt" ]] && echo --resume || true
}

if [[ ! -e "$DONE/pretrain" && -f docs/alphazero/pretrain/board-128x2.pt ]]; then  # kept from an earlier session
  mkdir -p runs/pretrained && cp docs/alphazero/pretrain/board-128x2.pt runs/pretrained/board-128x2.pt
  date -Is > "$DONE/pretrain"
fi
stage pretrain "$PY" -m training.pretrain docs/dataset/default runs/pretrained/board-128x2.pt --steps 12000 \
  --eval-every-steps 2000 --json docs/alphazero/pretrain/board-128x2.json
reached() {  # reached N: the run's report ends at N games (the config's max_minutes can stop a part sooner)
  "$PY" -c "import sys; rows = [l for l in open('$RUN/report.md') if l.startswith('| ') and l[2].isdigit()]
sys.exit(int(rows[-1].split('|')[1].replace(',', '')) != int(sys.argv[1]))" "$1"
}

train_to() {  # train_to N ARGS...: the trainer, then again with --resume wherever max_minutes stopped it before N
  local target=$1
  shift
  "$PY" -m training.alphazero --config "$CONFIG" --run "$RUN" $(resume_flag) "$@"
  until reached "$target"; do
    echo "$(date -Is) stopped before $target games (max_minutes): --resume"
    "$PY" -m training.alphazero --config "$CONFIG" --run "$RUN" --resume "$@"
  done
}

stage train-42496 train_to 42496 --stop-at 42496
stage train-61440 train_to 61440 --total-games 61440
stage head-to-head .venv/bin/trinity arena --agents "az:$RUN/latest.pt,solver=0" "az-standard:solver=0" \
  --games 600 --seed 12 --quiet --out docs/alphazero/pretrain/standard-61440-600
stronger() {  # the head-to-head's share for the rebuilt network: ship only a stronger one
  "$PY" -c "import json,sys; share=json.load(open('docs/alphazero/pretrain/standard-61440-600/arena.json'))['win_rate'][0][1]; print(f'head to head: {share:.1%}'); sys.exit(share <= 0.5)"
}
stronger || { echo "$(date -Is) the rebuilt network is not stronger than az-standard: not shipped"; exit 1; }
stage measure "$PY" scripts/make_az_standard.py --run "$RUN" --previous board-61k
echo "$(date -Is) all stages finished"
