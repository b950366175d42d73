#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs one libFuzzer target for `make fuzz`, in the build folder:
#   run.sh NAME SRCDIR SECONDS TIMEOUT [SEED]
# fuzz/fuzz-NAME on its corpus (fuzz/corpus-NAME, kept between runs) and its
# seeds (fuzz/seeds/NAME), with its dictionary when it has one (fuzz/NAME.dict
# of the build, else of SRCDIR). Targets run side by side, so each writes its
# log to fuzz/NAME.log and prints one line; on a finding (crash, leak,
# timeout, UBSan report) it prints the end of the log, where the report is,
# and exits 1, the input saved as fuzz/NAME-crash-* (leak-, timeout-, ...).
set -u
name=$1 src=$2 seconds=$3 timeout=$4 seed=${5:-}
dict=fuzz/$name.dict
test -f "$dict" || dict=$src/fuzz/$name.dict
test -f "$dict" || dict=
log=fuzz/$name.log
mkdir -p "fuzz/corpus-$name"
"./fuzz/fuzz-$name" -max_total_time="$seconds" -timeout="$timeout" ${seed:+-seed="$seed"} \
	${dict:+-dict="$dict"} -artifact_prefix="fuzz/$name-" \
	"fuzz/corpus-$name" "fuzz/seeds/$name" >"$log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
	tail -n 80 "$log"
	echo "fuzz-$name: FINDING (exit $rc); the whole log is $log"
	exit 1
fi
done=$(grep -E '^Done [0-9]+ runs' "$log" | tail -n 1)
echo "fuzz-$name: ${done:-done}; corpus of $(ls "fuzz/corpus-$name" | wc -l) inputs, no finding"
