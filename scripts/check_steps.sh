# check_steps.sh: the step runner of the shell checks (scripts/envsetup_check.sh,
# tests/customlayer/*/*_check.sh), sourced by bash after the script has set
# check_log to a scratch file.
#
#   check "what is checked" command [arguments...]
#
# runs the command with its output in $check_log and prints "ok    what", or
# "FAIL  what" and the command's output indented below it; failures counts
# the failed steps, so the script ends with [ "$failures" = 0 ].
failures=0
check() {
  local what=$1
  shift
  if "$@" >"${check_log:?check_steps.sh: set check_log before calling check}" 2>&1; then
    echo "ok    $what"
  else
    echo "FAIL  $what"
    sed 's/^/      /' "$check_log"
    failures=$((failures + 1))
  fi
}
