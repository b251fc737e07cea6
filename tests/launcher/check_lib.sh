# Shared by the scripts that observe onicrun from outside (sourced; needs
# $run, the onicrun to test). Gives $out (a temporary file), the pass and
# fail counts, and:
#   check DESC CMD...  CMD must succeed; on failure prints DESC and $out
#   go ARGS...         onicrun ARGS with a 20 s limit; sets rc and secs
#   check_end NAME     prints the tally; returns non-zero on any failure
out=$(mktemp)
pass=0
fail=0

check() {
    desc=$1
    shift
    if "$@"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAILED: $desc"
        sed 's/^/  | /' "$out"
    fi
}

go() {
    t0=$(date +%s%N)
    timeout 20 "$run" "$@" >"$out" 2>&1
    rc=$?
    secs=$(( ($(date +%s%N) - t0 + 999999999) / 1000000000 ))
}

check_end() {
    rm -f "$out"
    echo "$1: $pass passed, $fail failed"
    [ $fail -eq 0 ]
}
