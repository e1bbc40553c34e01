#!/bin/sh
# Shopping List: a Parley handler in POSIX shell with jq.
#
# JSON-RPC 2.0, one object per line, on standard input and output
# (docs/external-apps.md). The list is a text file, one item a line:
# $SHOPPING_LIST_FILE, by default list.txt in the folder Parley gives the app
# for its data ($PARLEY_APP_DATA), or in this folder when run by hand. The items people
# may say are those in groceries.txt and any ever added (known.txt), offered
# through the `options` method so they become part of the phrases.
set -u
here=$(cd "$(dirname "$0")" && pwd)
data=${PARLEY_APP_DATA:-$here}
list=${SHOPPING_LIST_FILE:-$data/list.txt}
known=${SHOPPING_LIST_KNOWN:-$data/known.txt}
touch "$list" "$known" || { echo "cannot write $list" >&2; exit 1; }

reply() { # id, result JSON
    printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$1" "$2"
}
fail() { # id, code, message
    jq -cn --argjson id "$1" --argjson code "$2" --arg message "$3" \
        '{jsonrpc: "2.0", id: $id, error: {code: $code, message: $message}}'
}
count() { grep -c . "$list" || true; }
# "milk, eggs and bread"
spoken_list() {
    jq -Rrs 'split("\n") | map(select(length > 0)) |
        if length == 1 then .[0] else (.[:-1] | join(", ")) + " and " + .[-1] end' "$list"
}

echo "ready: $(count) items in $list" >&2
while IFS= read -r line; do
    method=$(printf '%s' "$line" | jq -r '.method // empty' 2>/dev/null) || { echo "ignored a line that is not JSON" >&2; continue; }
    id=$(printf '%s' "$line" | jq -c '.id // empty')
    [ "$method" = shutdown ] && break
    [ -z "$id" ] && continue
    intent=$(printf '%s' "$line" | jq -r '.params.intent // empty')
    item=$(printf '%s' "$line" | jq -r '.params.parameters.item // empty')
    case "$method:$intent" in
    options:AddItem)
        reply "$id" "$(sort -u "$here/groceries.txt" "$known" | jq -Rsc '{options: split("\n") | map(select(length > 0) | {value: ., display: .})}')" ;;
    options:RemoveItem)
        reply "$id" "$(jq -Rsc '{options: split("\n") | map(select(length > 0) | {value: ., display: .})}' "$list")" ;;
    resolve:RemoveItem)
        proposed=$(printf '%s' "$line" | jq -r '.params.proposed // empty')
        if [ "$(count)" -eq 0 ]; then
            reply "$id" '{"resolution":"unsupported","reason":"The shopping list is empty."}'
        elif [ -n "$proposed" ] && ! grep -qxF "$proposed" "$list"; then
            reply "$id" "$(jq -cn --arg item "$proposed" '{resolution: "unsupported", reason: "\($item) is not on the shopping list."}')"
        else
            fail "$id" -32601 "not implemented"
        fi ;;
    perform:AddItem)
        if grep -qxF "$item" "$list"; then
            reply "$id" "$(jq -cn --arg item "$item" '{dialog: "\($item) is already on the shopping list."}')"
        else
            printf '%s\n' "$item" >> "$list"
            grep -qxF "$item" "$known" || printf '%s\n' "$item" >> "$known"
            reply "$id" "$(jq -cn --arg item "$item" --argjson n "$(count)" \
                '{dialog: "Added \($item).", detail: "The list has \($n) item\(if $n == 1 then "" else "s" end).", output: {count: $n}}')"
        fi ;;
    perform:RemoveItem)
        if grep -qxF "$item" "$list"; then
            grep -vxF "$item" "$list" > "$list.new"; mv "$list.new" "$list"
            reply "$id" "$(jq -cn --arg item "$item" '{dialog: "Removed \($item)."}')"
        else
            fail "$id" 1 "$item is not on the shopping list."
        fi ;;
    perform:ReadList)
        n=$(count)
        if [ "$n" -eq 0 ]; then
            reply "$id" '{"dialog":"The shopping list is empty.","output":{"count":0}}'
        else
            reply "$id" "$(jq -cn --arg items "$(spoken_list)" --argjson n "$n" \
                '{dialog: "\($n) item\(if $n == 1 then "" else "s" end): \($items).", output: {count: $n}}')"
        fi ;;
    confirmation:ClearList)
        reply "$id" "$(jq -cn --argjson n "$(count)" '{dialog: "Remove \(if $n == 1 then "the one item" else "all \($n) items" end) from the shopping list."}')" ;;
    perform:ClearList)
        : > "$list"
        reply "$id" '{"dialog":"The shopping list is empty now."}' ;;
    *)
        fail "$id" -32601 "not implemented" ;;
    esac
done
