import {type DefinitionIssue, makeIssue, nestingIssue} from './issue.js'
import {isObject, type PathSegment, visitStrings} from './paths.js'
import {hasSecretReference, malformedSecretReferences, secretReference} from './secret-refs.js'

/** Env names that say the value is a credential. */
const CREDENTIAL_NAME =
  /(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|PWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH)(_|$)/i

/** Values whose shape gives them away as keys or tokens, whatever the variable is called. */
const CREDENTIAL_VALUE = [
  /^hf_[A-Za-z0-9]{20,}$/, // Hugging Face
  /^sk-[A-Za-z0-9_-]{20,}$/, // OpenAI and alike
  /^(gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})$/, // GitHub
  /^(AKIA|ASIA)[0-9A-Z]{16}$/, // AWS access key id
  /^xox[abprs]-[\w-]{10,}$/, // Slack
  /^glpat-[\w-]{20,}$/, // GitLab
  /^eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}$/, // JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
]

/** Settings that only switch something (`WEBUI_AUTH: "False"`), numbers and ports are never credentials. */
const SWITCH_OR_NUMBER = /^(true|false|yes|no|on|off|y|n|enabled?|disabled?|none|null|nil|-?\d+(\.\d+)?)$/i

/** Placeholders a template leaves for the user: `<your-token>`, `{{TOKEN}}`, `${TOKEN}`, `$TOKEN`, `changeme`, `xxx`. */
const PLACEHOLDER =
  /^(<[^<>]*>|\{\{[^{}]*\}\}|\$\{[^{}]*\}|\$[A-Za-z_]\w*|x{3,}|\*{3,}|\.{3}|…|changeme|change[-_ ]me|replace[-_ ]?me|todo|your[-_ ][\w -]+)$/i

/** True for a value that holds something secret written inline (not empty, a reference, a switch or a placeholder). */
function isInlineSecret(value: string): boolean {
  const text = value.trim()
  return text !== '' && !hasSecretReference(text) && !SWITCH_OR_NUMBER.test(text) && !PLACEHOLDER.test(text)
}

function looksLikeCredential(name: string, value: string): boolean {
  return isInlineSecret(value) && (CREDENTIAL_NAME.test(name) || CREDENTIAL_VALUE.some((re) => re.test(value.trim())))
}

function secretNameFor(name: string): string {
  const cleaned = name
    .toUpperCase()
    .replace(/[^A-Z0-9_]/g, '_')
    .replace(/^([^A-Z_])/, '_$1')
  return cleaned || 'SECRET'
}

function inline(path: PathSegment[], what: string, secretName: string): DefinitionIssue {
  return makeIssue(
    path,
    'inline_credential',
    `${what} is written inline: the definition is uploaded where the node that runs it, and anyone with its address, can read it`,
    `write "${secretReference(secretName)}" instead and store the value with \`gpunet secrets set ${secretName}\``,
  )
}

/**
 * Warnings, not errors: credentials written inline (IAM keys, registry passwords, env values that look like
 * tokens), malformed secret references, ports outside 1-65535 and resources missing what their type uses.
 * Works on any value; parts that do not have the expected shape are skipped (the validator reports those).
 */
export function lintJobDefinition(value: unknown): DefinitionIssue[] {
  const warnings: DefinitionIssue[] = []
  if (!isObject(value)) return warnings
  // Past the one nesting limit the walk below would recurse too deep: say so instead.
  const deep = nestingIssue(value)
  if (deep) return [deep]

  visitStrings(value, (text, path) => {
    for (const fragment of malformedSecretReferences(text)) {
      warnings.push(
        makeIssue(
          path,
          'malformed_secret_reference',
          `\`${fragment}\` looks like a secret reference but is not one, so it is passed on as plain text`,
          'a reference is written exactly "%%secrets.NAME%%"; NAME starts with a letter or _ and holds letters, digits, _, . or -',
        ),
      )
    }
  })

  if (isObject(value.global)) lintEnv(value.global.env, ['global', 'env'], warnings)
  const ops = Array.isArray(value.ops) ? value.ops : []
  ops.forEach((op, i) => {
    const args = isObject(op) && isObject(op.args) ? op.args : undefined
    if (!args) return
    const base: PathSegment[] = ['ops', i, 'args']
    lintEnv(args.env, [...base, 'env'], warnings)
    lintDocker(args.authentication, [...base, 'authentication'], warnings)
    lintResources(args.resources, [...base, 'resources'], warnings)
  })
  return warnings
}

function lintEnv(env: unknown, path: PathSegment[], warnings: DefinitionIssue[]): void {
  if (!isObject(env)) return
  for (const [name, val] of Object.entries(env)) {
    if (typeof val === 'string' && looksLikeCredential(name, val)) {
      warnings.push(inline([...path, name], `env value \`${name}\` looks like a credential and`, secretNameFor(name)))
    }
  }
}

function lintDocker(authentication: unknown, path: PathSegment[], warnings: DefinitionIssue[]): void {
  const docker = isObject(authentication) ? authentication.docker : undefined
  if (!isObject(docker) || typeof docker.password !== 'string') return
  if (isInlineSecret(docker.password)) {
    warnings.push(inline([...path, 'docker', 'password'], 'the registry password', 'REGISTRY_PASSWORD'))
  }
}

function lintResources(resources: unknown, path: PathSegment[], warnings: DefinitionIssue[]): void {
  if (!Array.isArray(resources)) return
  resources.forEach((resource, j) => {
    if (!isObject(resource)) return
    const at: PathSegment[] = [...path, j]
    if (isObject(resource.IAM)) {
      for (const key of ['ACCESS_KEY_ID', 'SECRET_ACCESS_KEY'] as const) {
        const val = resource.IAM[key]
        if (typeof val === 'string' && isInlineSecret(val)) {
          warnings.push(inline([...at, 'IAM', key], `the storage key \`${key}\``, `AWS_${key}`))
        }
      }
    }
    if (resource.type === 'S3' && resource.url === undefined) {
      warnings.push(makeIssue(at, 'resource_incomplete', 'an S3 resource without `url` has nowhere to load from'))
    }
    if (resource.type === 'HF' && resource.repo === undefined) {
      warnings.push(makeIssue(at, 'resource_incomplete', 'an HF resource without `repo` names no model repository'))
    }
  })
}
