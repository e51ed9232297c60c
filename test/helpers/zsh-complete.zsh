# zsh -f zsh-complete.zsh SCRIPT OUT LINE: types LINE and a TAB in an interactive zsh (under zpty)
# that has SCRIPT loaded after compinit, and writes each candidate zsh offers to OUT, one a line,
# then END. compadd is wrapped to record what it adds (after its own matching against the word).
zmodload zsh/zpty
zpty complete zsh -f -i
zpty -w complete "PROMPT=''; RPROMPT=''; autoload -Uz compinit; compinit -u -D; source ${(q)1}; __out=${(q)2}"
zpty -w complete 'compadd() {
  if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi
  local -a __hits __prefix; builtin compadd -A __hits "$@"; zparseopts -E P:=__prefix
  local hit; for hit in $__hits; do print -r -- "${__prefix[2]}$hit" >> $__out; done
  builtin compadd "$@"
}'
zpty -w complete "__done() { print -r -- END >> \$__out }; zle -N __done; bindkey '^X' __done"
zpty -w complete "cd ${(q)PWD}"
zpty -n -w complete "$3"$'\t'
zpty -n -w complete $'\C-x'
for i in {1..200}; do [[ -f $2 ]] && grep -qx END $2 && break; sleep 0.1; done
zpty -d complete
