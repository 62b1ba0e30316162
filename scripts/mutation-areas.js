// The areas of `npm run mutation`: where a bug costs money, secrets or durability (issue 26), each with the test
// files that cover it. A test file that starts a localnet or spawns the CLI is left out when the area's unit
// tests cover it: each mutant runs the tests that cover it, and a slow one multiplies the run's time.

/** Area → source files (globs Stryker takes) and the test files run against their mutants. */
export const AREAS = {
  ed25519: {
    mutate: ['src/lib/ed25519.ts'],
    spec: ['test/lib/ed25519.test.ts'],
  },
  preflight: {
    mutate: ['src/lib/job/preflight.ts'],
    spec: [
      'test/lib/job/preflight.test.ts',
      'test/lib/job/preflight-hints.test.ts',
      'test/lib/job/secrets-check.test.ts',
    ],
  },
  'market-amounts': {
    mutate: ['src/lib/market/amounts.ts'],
    spec: ['test/lib/market/amounts.test.ts', 'test/lib/market/amounts-messages.test.ts'],
  },
  'market-instructions': {
    mutate: ['src/lib/market/instructions.ts'],
    spec: [
      'test/lib/market/codecs.test.ts',
      'test/lib/market/conformance.test.ts',
      'test/lib/market/instructions-edges.test.ts',
    ],
  },
  'market-send': {
    mutate: ['src/lib/market/send.ts', 'src/lib/market/sign.ts'],
    spec: [
      'test/lib/market/send.test.ts',
      'test/lib/market/send-fee-cap.test.ts',
      'test/lib/market/send-quote.test.ts',
      'test/lib/market/confirm.test.ts',
    ],
  },
  'market-post': {
    mutate: ['src/lib/market/post.ts'],
    // The CLI tests of job post spawn the built command, which no mutant of the source reaches.
    spec: ['test/lib/market/post.test.ts'],
  },
  secrets: {
    mutate: ['src/lib/secrets/service/**/*.ts'],
    spec: ['test/lib/secrets/service/*.test.ts', 'test/lib/secrets/client.test.ts'],
  },
  'jobs-program': {
    mutate: ['src/lib/localnet/jobs-program/**/*.ts'],
    // The tables first: a mutant of a table built at load time runs every test until one fails.
    spec: [
      'test/lib/localnet/jobs-program-tables.test.ts',
      'test/lib/localnet/jobs-context.test.ts',
      'test/lib/localnet/idl-account.test.ts',
      'test/lib/localnet/jobs-program.test.ts',
    ],
  },
  'node-api': {
    mutate: ['src/lib/node-api/protocol.ts'],
    spec: ['test/lib/node-api/protocol.test.ts'],
  },
  definition: {
    // The generated validators are checked against their sources (fast-path.test.ts, network-form.test.ts).
    mutate: [
      'src/lib/definition/**/*.ts',
      '!src/lib/definition/fast-path/generated.ts',
      '!src/lib/definition/network-form/nosana-validator.generated.ts',
    ],
    spec: ['test/lib/definition/*.test.ts', 'test/conformance/network-form.test.ts', 'test/lib/templates.test.ts'],
  },
}

/**
 * The files to mutate and the test files to run for `targets`: area names, or source files (each then runs the
 * tests of the area that holds it). Throws on a target no area holds.
 */
export function mutationTargets(targets) {
  const mutate = new Set()
  const spec = new Set()
  for (const target of targets) {
    const area =
      AREAS[target] ?? Object.values(AREAS).find((a) => a.mutate.some((m) => !m.startsWith('!') && matches(m, target)))
    if (!area) throw new Error(`no mutation area holds ${target}; areas: ${Object.keys(AREAS).join(', ')}`)
    for (const m of AREAS[target] ? area.mutate : [target]) mutate.add(m)
    for (const s of area.spec) spec.add(s)
  }
  return {mutate: [...mutate], spec: [...spec]}
}

/** Whether a file path falls under a mutate pattern: the file itself, or a `dir/**` glob's folder. */
function matches(pattern, file) {
  const dir = pattern.split('**')[0]
  return pattern.includes('**') ? file.startsWith(dir) && file.endsWith('.ts') : pattern === file
}
