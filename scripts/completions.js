// Shell completion scripts for bash, zsh and fish, written at build time from oclif.manifest.json into
// dist/completions/ (`gpunet completion SHELL` prints one). Nothing of this runs when a command starts.
import {mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')

/** The values of flags whose list is no flag option but is known at build time: `job init --template` takes a template. */
export function knownValues() {
  const templates = readdirSync(join(root, 'job-templates'))
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort()
  return {'job:init': {template: templates}}
}

/**
 * Commands as words, each with its flags (`--name`, `-c`) and the values a flag takes when it lists them (its
 * options, or `values[command id][flag]`).
 */
export function completionTable(manifest, values = {}) {
  return Object.values(manifest.commands)
    .filter((command) => !command.hidden)
    .map((command) => ({
      words: command.id.split(':'),
      summary: command.summary ?? '',
      flags: Object.values(command.flags)
        .filter((flag) => !flag.hidden)
        .map((flag) => ({
          name: flag.name,
          char: flag.char,
          takesValue: flag.type === 'option',
          options: flag.options ?? values[command.id]?.[flag.name] ?? [],
          allowNo: Boolean(flag.allowNo),
          summary: flag.summary ?? flag.description ?? '',
        })),
    }))
    .sort((a, b) => a.words.join(' ').localeCompare(b.words.join(' ')))
}

/** A shell-quoted word for bash and zsh. */
const sq = (text) => `'${text.replaceAll("'", "'\\''")}'`

/** The bash script (zsh loads it through bashcompinit). */
export function bashScript(table) {
  const cases = table
    .map((c) => {
      const flags = c.flags.flatMap((f) => [
        `--${f.name}`,
        ...(f.allowNo ? [`--no-${f.name}`] : []),
        ...(f.char ? [`-${f.char}`] : []),
      ])
      const values = c.flags
        .filter((f) => f.options.length > 0)
        .map(
          (f) =>
            `      --${f.name}${f.char ? `|-${f.char}` : ''}) COMPREPLY=($(compgen -W ${sq(f.options.join(' '))} -- "$cur")); return ;;`,
        )
      return [
        `    ${sq(c.words.join(' '))})`,
        `      flags=${sq(flags.join(' '))}`,
        '      case "$prev" in',
        ...values,
        '      esac',
        '      ;;',
      ].join('\n')
    })
    .join('\n')
  const commands = table.map((c) => c.words.join(' '))
  return `# gpunet completion for bash: source it from ~/.bashrc, e.g.
#   source <(gpunet completion bash)
_gpunet() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  local commands=(${commands.map(sq).join(' ')})
  local typed=() word command='' flags=''
  for word in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    [[ $word == -* ]] && break
    typed+=("$word")
  done
  # The longest run of typed words that names a command.
  local n
  for ((n = \${#typed[@]}; n > 0; n--)); do
    local candidate="\${typed[*]:0:n}"
    local c
    for c in "\${commands[@]}"; do
      if [[ $c == "$candidate" ]]; then command=$candidate; break 2; fi
    done
  done
  case "$command" in
${cases}
  esac
  if [[ $cur == -* && -n $command ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    return
  fi
  if [[ -z $command ]]; then
    # The next word of the commands that start with what is typed.
    local prefix="\${typed[*]}" next='' rest
    for c in "\${commands[@]}"; do
      if [[ -z $prefix ]]; then rest=$c
      elif [[ $c == "$prefix "* ]]; then rest=\${c#"$prefix "}
      else continue
      fi
      [[ " $next " == *" \${rest%% *} "* ]] || next+=" \${rest%% *}"
    done
    COMPREPLY=($(compgen -W "$next" -- "$cur"))
  fi
}
complete -o default -F _gpunet gpunet
`
}

/** The zsh script: bash's, through zsh's bashcompinit. */
export function zshScript(table) {
  return `# gpunet completion for zsh: add to ~/.zshrc, e.g.
#   source <(gpunet completion zsh)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(table).split('\n').slice(2).join('\n')}`
}

/** The fish script: one `complete` line per command word, flag and flag value. */
export function fishScript(table) {
  const fq = (text) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
  const lines = [
    '# gpunet completion for fish: gpunet completion fish > ~/.config/fish/completions/gpunet.fish',
    'function __gpunet_words',
    '  set -l words (commandline -opc)[2..-1]',
    '  for w in $words',
    "    string match -q -- '-*' $w; and break",
    '    echo $w',
    '  end',
    'end',
    '# True when the words typed so far are exactly $argv (a command or a topic).',
    'function __gpunet_at',
    '  test "(__gpunet_words)" = "$argv"',
    'end',
    '# True when the words typed so far start with the command $argv.',
    'function __gpunet_in',
    '  set -l typed (__gpunet_words)',
    '  test (count $typed) -ge (count $argv); and test "$typed[1..(count $argv)]" = "$argv"',
    'end',
    'complete -c gpunet -f',
  ]
  const seen = new Set()
  for (const c of table) {
    for (let i = 0; i < c.words.length; i++) {
      const key = c.words.slice(0, i + 1).join(' ')
      if (seen.has(key)) continue
      seen.add(key)
      const at = i === 0 ? '__gpunet_at ""' : `__gpunet_at ${c.words.slice(0, i).join(' ')}`
      const description = i === c.words.length - 1 ? c.summary : ''
      lines.push(`complete -c gpunet -n ${fq(at)} -a ${fq(c.words[i])}${description ? ` -d ${fq(description)}` : ''}`)
    }
    const inCommand = `__gpunet_in ${c.words.join(' ')}`
    for (const f of c.flags) {
      const parts = [`complete -c gpunet -n ${fq(inCommand)} -l ${f.name}`]
      if (f.char) parts.push(`-s ${f.char}`)
      if (f.takesValue) parts.push(f.options.length > 0 ? `-x -a ${fq(f.options.join(' '))}` : '-r -F')
      if (f.summary) parts.push(`-d ${fq(f.summary.split('\n')[0])}`)
      lines.push(parts.join(' '))
      if (f.allowNo) lines.push(`complete -c gpunet -n ${fq(inCommand)} -l no-${f.name}`)
    }
  }
  return `${lines.join('\n')}\n`
}

/** Writes the three scripts from the built manifest. */
export function writeCompletions() {
  const manifest = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8'))
  const table = completionTable(manifest, knownValues())
  const dir = join(root, 'dist', 'completions')
  mkdirSync(dir, {recursive: true})
  writeFileSync(join(dir, 'gpunet.bash'), bashScript(table))
  writeFileSync(join(dir, 'gpunet.zsh'), zshScript(table))
  writeFileSync(join(dir, 'gpunet.fish'), fishScript(table))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeCompletions()
