// The areas of `npm run mutation`: where a bug costs money, secrets or durability (issue 26), each with the test
// files that cover it. A test file that starts a localnet or spawns the CLI is left out when the area's unit
// tests cover it: each mutant runs the tests that cover it, and a slow one multiplies the run's time.

import {minimatch} from 'minimatch'

const DEFINITION_TESTS = [
  'test/lib/definition/*.test.ts',
  'test/conformance/network-form.test.ts',
  'test/lib/definition/templates.test.ts',
]

const SECRETS_TESTS = ['test/lib/secrets/service/*.test.ts', 'test/lib/secrets/client.test.ts']

// The tables first: a mutant of a table built at load time runs every test until one fails.
const JOBS_PROGRAM_TESTS = [
  'test/lib/localnet/jobs-program-tables.test.ts',
  'test/lib/localnet/jobs-context.test.ts',
  'test/lib/localnet/idl-account.e2e.test.ts',
  'test/lib/localnet/jobs-program.e2e.test.ts',
]

/** Area → source files (globs Stryker takes) and the test files run against their mutants. */
export const AREAS = {
  ed25519: {
    mutate: ['src/lib/keys/ed25519.ts'],
    spec: ['test/lib/keys/ed25519.test.ts'],
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
    mutate: ['src/lib/text/amounts.ts'],
    spec: ['test/lib/text/amounts.test.ts', 'test/lib/text/amounts-messages.test.ts'],
  },
  'market-instructions': {
    mutate: ['src/lib/market/codec/instructions.ts'],
    spec: [
      'test/lib/market/codecs.test.ts',
      'test/lib/market/conformance.test.ts',
      'test/lib/market/instructions-edges.test.ts',
    ],
  },
  'market-send': {
    mutate: ['src/lib/market/rpc/send.ts', 'src/lib/market/rpc/sign.ts'],
    spec: [
      'test/lib/market/send.test.ts',
      'test/lib/market/send-fee-cap.test.ts',
      'test/lib/market/send-quote.test.ts',
      'test/lib/market/confirm.test.ts',
    ],
  },
  'market-post': {
    mutate: ['src/lib/market/jobs/post.ts'],
    // The CLI tests of job post spawn the built command, which no mutant of the source reaches.
    spec: ['test/lib/market/post.test.ts'],
  },
  // The secrets service in three areas, so each fits the 30 minutes (one area took 55): each runs all its tests.
  'secrets-http': {
    mutate: [
      'src/lib/secrets/service/{server,body,rate-limit,job-cache,index}.ts',
      'src/lib/http/api-{server,error}.ts',
    ],
    spec: SECRETS_TESTS,
  },
  'secrets-auth': {
    mutate: ['src/lib/secrets/service/{auth,chain-authority,crypto}.ts'],
    spec: SECRETS_TESTS,
  },
  'secrets-storage': {
    mutate: ['src/lib/secrets/service/{storage,sqlite,postgres}.ts'],
    spec: SECRETS_TESTS,
  },
  // The jobs program in four: the instructions (instructions/, one file each) in two halves (keep them near equal
  // as the code moves: the shared helpers and open to delist, then recover to cleanAdmin with the table), and the
  // runtime around them in two (the execution context and the instruction runner; the accounts, errors and tables).
  // As one area the instructions were estimated at over an hour, and the runtime took 41 minutes: its 117 static
  // mutants each restart the test runner.
  'jobs-program-handlers-a': {
    mutate: [
      'src/lib/localnet/jobs-program/instruction-kit.ts',
      'src/lib/localnet/jobs-program/instructions/{open,update,close,close-admin,assign,list,delist}.ts',
    ],
    spec: JOBS_PROGRAM_TESTS,
  },
  'jobs-program-handlers-b': {
    mutate: [
      'src/lib/localnet/jobs-program/instructions/{recover,extend,end,work,stop,claim,complete,finish,quit,quit-admin,clean,clean-admin}.ts',
      'src/lib/localnet/jobs-program/instructions.ts',
    ],
    spec: JOBS_PROGRAM_TESTS,
  },
  'jobs-program-context': {
    mutate: ['src/lib/localnet/jobs-program/{context,execute}.ts'],
    spec: JOBS_PROGRAM_TESTS,
  },
  'jobs-program-accounts': {
    mutate: [
      'src/lib/localnet/jobs-program/**/*.ts',
      '!src/lib/localnet/jobs-program/instructions/**',
      '!src/lib/localnet/jobs-program/{instruction-kit,instructions,mixed-transaction}.ts',
      '!src/lib/localnet/jobs-program/{context,execute}.ts',
    ],
    spec: JOBS_PROGRAM_TESTS,
  },
  'node-api': {
    mutate: ['src/lib/node-api/protocol.ts'],
    spec: ['test/lib/node-api/protocol.test.ts'],
  },
  // The localnet's credits: what an owner holds, spends and was answered under an Idempotency-Key.
  'credits-ledger': {
    mutate: ['src/lib/credits/ledger.ts'],
    spec: ['test/lib/credits/ledger.e2e.test.ts'],
  },
  // Issue 59: the money and access checks the suite let through.
  // The owner's check of a manager's withdraw transaction (client-vault.ts's checkWithdraw and the vault-is-owner
  // check): what the wallet co-signs.
  'withdraw-check': {
    mutate: ['src/lib/deployments/client/client-vault.ts:90-187'],
    spec: ['test/lib/deployments/client-vault.test.ts', 'test/lib/deployments/hostile-manager.test.ts'],
  },
  // The manager's side of a withdraw (issue 54): who may withdraw a vault, what it keeps for the deployments paying
  // from it (the floor) and what the transaction moves; the shared vault got or made; the withdraw body's amounts.
  'vault-withdraw': {
    mutate: [
      'src/lib/deployments/manager/vault-operations.ts',
      'src/lib/deployments/paying/floor.ts',
      'src/lib/deployments/paying/withdraw.ts',
    ],
    spec: [
      'test/lib/deployments/vault-floor.test.ts',
      'test/lib/deployments/shared-vault.test.ts',
      'test/lib/deployments/vault-withdraw.test.ts',
    ],
  },
  // Paying safely: the lease checked before a payment, saved bytes resent while they can land, drain before stop.
  'deployments-paying': {
    mutate: ['src/lib/deployments/paying/paying.ts'],
    spec: ['test/lib/deployments/paying.test.ts'],
  },
  // The localnet's credit routes: whose job a key may stop or extend, holds kept or given back, Idempotency-Keys.
  'credits-routes': {
    mutate: ['src/lib/credits/routes.ts'],
    spec: ['test/lib/credits/routes.test.ts'],
  },
  // Their money paths alone (holds reconciled, stopped processes' requests settled, a listing's send, whose job a key
  // may touch): the whole file, at some 8 s of tests a mutant, takes over half an hour on two shared cores.
  'credits-routes-money': {
    mutate: ['src/lib/credits/routes.ts:70-238'],
    spec: ['test/lib/credits/routes.test.ts'],
  },
  // The definition code in three areas, so each fits the 30 minutes: every one runs all the definition tests
  // (per-test coverage then picks, for each mutant, the tests that reach it).
  'definition-schema': {
    // The generated validators are checked against their sources (fast-path.test.ts, network-form.test.ts).
    mutate: [
      'src/lib/definition/{schema,json-schema,validate,semantic,spec-verdict,zod-issues}.ts',
      'src/lib/definition/fast-path/{generate,zod-rules}.ts',
    ],
    spec: DEFINITION_TESTS,
  },
  'definition-files': {
    mutate: [
      'src/lib/definition/{check,frame,one-off,issue,source,size,secret-refs,lint,paths,report-text}.ts',
      'src/lib/definition/validate-files.ts',
    ],
    spec: DEFINITION_TESTS,
  },
  'definition-network': {
    mutate: ['src/lib/definition/network-form/{read,prepare,translate}.ts', 'src/lib/definition/upload.ts'],
    spec: DEFINITION_TESTS,
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
      AREAS[target] ??
      Object.values(AREAS).find(
        (a) =>
          a.mutate.some((m) => !m.startsWith('!') && minimatch(target, m.replace(/:\d+-\d+$/, ''))) &&
          !a.mutate.some((m) => m.startsWith('!') && minimatch(target, m.slice(1))),
      )
    if (!area) throw new Error(`no mutation area holds ${target}; areas: ${Object.keys(AREAS).join(', ')}`)
    for (const m of AREAS[target] ? area.mutate : [target]) mutate.add(m)
    for (const s of area.spec) spec.add(s)
  }
  return {mutate: [...mutate], spec: [...spec]}
}

/** The name of a run's report, incremental file and temporary folder: its targets, joined. */
export function runName(targets) {
  return targets.join('+').replace(/[^\w.+-]+/g, '_')
}
