# Shared by the scripts that run the bundled action as a self-hosted runner would, on the GPU
# machine (gpu-e2e.sh, gpu-quickstart.sh): source it after `set -uo pipefail` with $root the
# kernelgate checkout.
#   standin_start OUTDIR [standin.mjs options]  starts the GitHub REST stand-in (scripts/standin.ts,
#       bundled into .carry/standin by scripts/pack-standin.sh) on 127.0.0.1; sets api_url and
#       standin_pid, writes OUTDIR/standin.log and OUTDIR/standin-state.json, stops it on exit
#   standin_stop  stops it now (its state file is written once more on SIGTERM)
#   action_defaults  prints INPUT_NAME=default for every input of action.yml that has a default,
#       as a runner sets them before the workflow's `with:` (an expression such as
#       ${{ github.token }} is left for the caller to set)
#   action_entry  prints the path of the script action.yml's runs.main names
standin_start() {
  local out=$1 dir
  shift
  if [[ ! -f $root/.carry/standin/standin.mjs ]]; then
    echo "no $root/.carry/standin/standin.mjs: run scripts/pack-standin.sh in the checkout first" >&2
    return 2
  fi
  dir=$(mktemp -d)
  cp -r "$root/.carry/standin/." "$dir/"
  xz -dkf "$dir/node_modules/@octokit/openapi/generated/api.github.com.json.xz"
  node "$dir/standin.mjs" --url-file "$dir/url" --state-file "$out/standin-state.json" "$@" \
    >"$out/standin.log" 2>&1 &
  standin_pid=$!
  for _ in $(seq 50); do [[ -s $dir/url ]] && break; sleep 0.1; done
  if [[ ! -s $dir/url ]]; then
    echo "the GitHub stand-in did not start in 5 s: $out/standin.log" >&2
    return 2
  fi
  api_url=$(cat "$dir/url")
  trap 'kill $standin_pid 2>/dev/null' EXIT
}

standin_stop() {
  kill "$standin_pid" 2>/dev/null && wait "$standin_pid" 2>/dev/null
  return 0
}

action_defaults() {
  awk '
    /^[a-z]/ { inputs = ($0 == "inputs:") ; next }
    inputs && /^  [a-z][a-z-]*:$/ { name = toupper(substr($1, 1, length($1) - 1)); next }
    inputs && /^    default: / {
      value = substr($0, length("    default: ") + 1)
      if (value ~ /^\x27.*\x27$/) value = substr(value, 2, length(value) - 2)
      if (value !~ /\$\{\{/) print "INPUT_" name "=" value
    }' "$root/action.yml"
}

action_entry() {
  local main
  main=$(awk '/^runs:$/ { runs = 1; next } /^[a-z]/ { runs = 0 } runs && /^  main: / { print $2 }' "$root/action.yml")
  [[ -n $main ]] || { echo "action.yml: no runs.main" >&2; return 2; }
  echo "$root/$main"
}
