#!/bin/sh
# Tests of the Shopping List handler through its protocol: each case sends
# requests on standard input and checks the answers with jq.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export SHOPPING_LIST_FILE="$work/list.txt" SHOPPING_LIST_KNOWN="$work/known.txt"
failures=0

# run REQUESTS...: one JSON request per argument; prints the answers, one a line.
run() {
    for request in "$@"; do printf '%s\n' "$request"; done | "$here/handler.sh" 2>"$work/stderr"
}
perform() { printf '{"jsonrpc":"2.0","id":%s,"method":"perform","params":{"intent":"%s","parameters":%s}}' "$1" "$2" "$3"; }
# check NAME JQ-EXPRESSION ANSWERS: the expression must be true of the answers (slurped as an array).
check() {
    if printf '%s\n' "$3" | jq -es "$2" >/dev/null; then
        echo "ok - $1"
    else
        echo "not ok - $1"; printf '%s\n' "$3" | sed 's/^/    /'; failures=$((failures + 1))
    fi
}

answers=$(run "$(perform 1 AddItem '{"item":"milk"}')" "$(perform 2 AddItem '{"item":"eggs"}')" "$(perform 3 AddItem '{"item":"milk"}')" \
    "$(perform 4 ReadList '{}')")
check "adding answers with the count, in request order" \
    '.[0].id == 1 and .[0].result.dialog == "Added milk." and .[1].result.output.count == 2' "$answers"
check "an item already there is not added twice" '.[2].result.dialog == "milk is already on the shopping list."' "$answers"
check "reading lists every item" '.[3].result.dialog == "2 items: milk and eggs."' "$answers"

answers=$(run '{"jsonrpc":"2.0","id":5,"method":"options","params":{"intent":"RemoveItem","parameter":"item"}}' \
    '{"jsonrpc":"2.0","id":6,"method":"options","params":{"intent":"AddItem","parameter":"item"}}')
check "remove offers what is on the list, in order" '.[0].result.options == [{"value":"milk","display":"milk"},{"value":"eggs","display":"eggs"}]' "$answers"
check "add offers groceries and items ever added" '(.[1].result.options | map(.value)) as $v | ($v | index("flour")) and ($v | index("eggs"))' "$answers"

answers=$(run '{"jsonrpc":"2.0","id":7,"method":"resolve","params":{"intent":"RemoveItem","parameter":"item","proposed":"bread","parameters":{}}}' \
    '{"jsonrpc":"2.0","id":8,"method":"resolve","params":{"intent":"RemoveItem","parameter":"item","proposed":"milk","parameters":{}}}' \
    "$(perform 9 RemoveItem '{"item":"milk"}')" "$(perform 10 RemoveItem '{"item":"milk"}')")
check "removing something not on the list is unsupported, with the reason" \
    '.[0].result == {"resolution":"unsupported","reason":"bread is not on the shopping list."}' "$answers"
check "an item on the list is left to the default resolution" '.[1].error.code == -32601' "$answers"
check "remove, then the app error when it is gone" '.[2].result.dialog == "Removed milk." and .[3].error.message == "milk is not on the shopping list."' "$answers"

answers=$(run '{"jsonrpc":"2.0","id":11,"method":"confirmation","params":{"intent":"ClearList","parameters":{}}}' \
    "$(perform 12 ClearList '{}')" "$(perform 13 ReadList '{}')" \
    '{"jsonrpc":"2.0","id":14,"method":"resolve","params":{"intent":"RemoveItem","parameter":"item","proposed":null,"parameters":{}}}')
check "clearing states the stakes first" '.[0].result.dialog == "Remove the one item from the shopping list."' "$answers"
check "cleared means empty" '.[1].result.dialog == "The shopping list is empty now." and .[2].result.output.count == 0' "$answers"
check "nothing to remove from an empty list" '.[3].result.reason == "The shopping list is empty."' "$answers"

answers=$(run 'not json' '{"jsonrpc":"2.0","method":"shutdown"}' "$(perform 15 ReadList '{}')")
check "a line that is not JSON is skipped; shutdown stops before later requests" 'length == 0' "$answers"
answers=$(run '{"jsonrpc":"2.0","id":16,"method":"frobnicate","params":{}}')
check "an unknown method is -32601" '.[0].error.code == -32601' "$answers"

[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failed"; exit 1; }
