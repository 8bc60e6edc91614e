#!/bin/bash
# `elicit demo` answered by a script, for machines without a person at the
# keyboard (CI, packaging/fresh-root.sh): the same demo in the terminal
# front-end's plain line mode (`--plain`), each of its four example forms
# answered as a newcomer would (the confirmation accepted, every field kind
# and the contact filled in and sent, the URL consent declined: there is no
# browser to open), then standard input closed, which ends the front-end
# and so the demo. Passes when the demo exits 0 having sent all four
# answers, with no prompt asked twice; the transcript is printed.
#
#   packaging/scripted-demo.sh [ELICIT]    (default: target/release/elicit)
#
# Every wait has a deadline (DEMO_DEADLINE seconds, default 120).
set -euo pipefail
elicit=${1:-target/release/elicit}
deadline=$((SECONDS + ${DEMO_DEADLINE:-120}))
die() { echo "scripted-demo: FAILED: $*" >&2; exit 1; }
[ -x "$elicit" ] || die "$elicit is not built"

# What to type at a field's prompt, by the field's label; Enter alone keeps
# the value in brackets (a default, or nothing for an optional field).
answer_field() {
  case $1 in
    Name) echo "Ann" ;;
    Agree) echo "y" ;;
    "First Name") echo "Ann" ;;
    "Last Name") echo "Lee" ;;
    "Email Address") echo "ann@example.com" ;;
    *) echo "" ;;
  esac
}

coproc DEMO { exec "$elicit" demo --plain 2>&1; }
demo_pid=$DEMO_PID
to_demo=${DEMO[1]}
from_demo=${DEMO[0]}
trap 'kill "$demo_pid" 2>/dev/null || true' EXIT

sent=0
asked=""   # the prompts answered since the last new form, to catch loops
segment="" # the output since the last newline or answer
while :; do
  left=$((deadline - SECONDS))
  [ "$left" -gt 0 ] || die "no end within ${DEMO_DEADLINE:-120} s (sent $sent of 4)"
  # One character at a time: the prompts end without a newline.
  IFS= read -r -N 1 -t "$left" char <&"$from_demo" || break # the demo ended
  printf '%s' "$char"
  if [ "$char" = $'\n' ]; then
    case $segment in
      "Sent to "*) sent=$((sent + 1)) ;;
      "== "*" asks"*) asked="" ;;
      "! "*) die "the demo did not understand an answer: $segment" ;;
    esac
    segment=""
    # All four answered: closing standard input ends the front-end, and
    # with it the demo.
    if [ "$sent" -eq 4 ] && [ -n "$to_demo" ]; then
      exec {to_demo}>&-
      to_demo=""
    fi
    continue
  fi
  segment+=$char
  case $segment in
    "Accept? [y]es, [d]ecline, [c]ancel: ") reply=y ;;
    "Send it? [y]es, [e]dit, [d]ecline, [c]ancel: ") reply=y ;;
    "Open it in your browser? [y]es, [d]ecline, [c]ancel: ") reply=d ;;
    *" ["*"]: ") reply=$(answer_field "${segment% \[*}") ;;
    *) continue ;;
  esac
  case $asked in *"|$segment|"*) die "asked again: $segment" ;; esac
  asked+="|$segment|"
  [ -n "$to_demo" ] || die "a prompt after all four answers: $segment"
  printf '%s\n' "$reply" >&"$to_demo"
  printf '%s\n' "$reply" # the transcript shows what was typed
  segment=""
done
trap - EXIT
status=0
wait "$demo_pid" || status=$?
[ "$sent" -eq 4 ] || die "the demo ended after $sent of 4 answers (exit $status)"
[ "$status" -eq 0 ] || die "the demo exited $status"
echo "scripted-demo: ok, 4 forms answered, the demo exited 0"
