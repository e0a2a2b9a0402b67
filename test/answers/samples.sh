#!/usr/bin/env bash
# samples.sh runs the shared lectures and housing samples' questions through the real binary (`ragd ask`) and
# prints, per question, whether the answer holds every expected string (answerable) or is the "not covered"
# reply (unanswerable), then the totals. Usage: test/answers/samples.sh [ragd binary] [shared dir]
#
# Lectures: the 12 lectures are ingested with their week and lecture name from index.csv; all 30 questions
# are asked over the whole set. Housing: the 30 announcements are ingested with their id; the content
# questions (and the named-announcement not-found ones) are asked with the filter id=<expect_ids[0]>, the
# exact form of the title filter each question implies.
set -euo pipefail
bin=${1:-bin/ragd}
shared=${2:-../shared}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

lec=$shared/samples/lectures
tail -n +2 "$lec/index.csv" | python3 -c '
import csv, sys
for f, name, week in csv.reader(sys.stdin):
    print(f"{f}\t{name}\t{week}")' | while IFS=$'\t' read -r f name week; do
	"$bin" ingest --data-dir "$dir/lec" --meta "week=$week" --meta "lecture_name=$name" "$lec/$f" >/dev/null
done

# check QUESTION-JSON ANSWER-JSON: prints "ok" or "FAIL <reason>".
check() {
	jq -rn --argjson q "$1" --argjson a "$2" '
		if $q.answerable == false or ($q.kind // "") == "notfound" then
			(if $a.not_found then "ok" else "FAIL answered" end)
		else
			([$q.expect[] | select(. as $e | $a.answer | contains($e) | not)] as $miss |
			 if $a.not_found then "FAIL refused"
			 elif ($miss | length) > 0 then "FAIL missing " + ($miss | join(", "))
			 else "ok" end)
		end'
}

run() { # set, question JSON, extra ask flags...
	local set=$1 q=$2; shift 2
	local text ans res
	text=$(jq -r .question <<<"$q")
	ans=$("$bin" ask --json "$@" "$text")
	res=$(check "$q" "$ans")
	printf '%s %s %s (%d chars) %s\n' "$set" "$(jq -r .id <<<"$q")" "$res" \
		"$(jq -r '.answer | length' <<<"$ans")" "$text"
	if [[ ${VERBOSE:-} != "" ]]; then jq -r '.answer' <<<"$ans" | sed 's/^/    /'; fi
	echo "$set $res" >>"$dir/results"
}

while read -r q; do
	run lectures "$q" --data-dir "$dir/lec"
done <"$lec/questions.jsonl"

hou=$shared/samples/housing
for f in "$hou"/docs/*.md; do
	id=$(basename "$f" .md)
	"$bin" ingest --data-dir "$dir/hou" --meta "id=$id" "$f" >/dev/null
done
jq -c 'select(.kind == "content" or (.kind == "notfound" and (.expect_ids | length) == 1))' "$hou/questions.jsonl" |
	while read -r q; do
		run housing "$q" --data-dir "$dir/hou" --filter "id=$(jq -r '.expect_ids[0]' <<<"$q")"
	done

for set in lectures housing; do
	ok=$(grep -c "^$set ok" "$dir/results" || true)
	all=$(grep -c "^$set " "$dir/results" || true)
	refused=$(grep -c "^$set FAIL refused" "$dir/results" || true)
	answered=$(grep -c "^$set FAIL answered" "$dir/results" || true)
	echo "$set: $ok/$all ok; false refusals $refused, false answers $answered"
done
