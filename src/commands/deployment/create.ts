import * as Flags from '@oclif/core/flags'

import {type DeploymentJson, DeploymentCommand} from '../../cli/deployment-command.js'
import {autoscaleFlags, deploymentFlags, marketFlag, needOfFlags, placementFlags} from '../../cli/flags.js'
import {chooseMarket, jobNeed, parseNeed} from '../../lib/job/placing.js'
import {needAsks, type Placement, placementLines} from '../../lib/market/jobs/placement.js'
import {CREATE_STRATEGIES, createBody, MAX_REPLICAS} from '../../lib/deployments/client/client-create.js'
import {
  budgetFromFlag,
  policyFromFlags,
  policyRequest,
  refuseOnHostedManager,
} from '../../lib/deployments/client/client-autoscale.js'
import {GpunetError, isGpunetError} from '../../lib/errors.js'
import {connectMarket} from '../../lib/network-connection.js'
import {settingsNameHostedManager} from '../../lib/manager-connection.js'
import {withExitCodes} from '../../cli/exit-codes.js'
import {PublicKey} from '@solana/web3.js'

export default class DeploymentCreate extends DeploymentCommand {
  static override summary = 'Create a deployment: a job definition kept running as N replicas by a deployment manager.'

  static override description = withExitCodes(
    `The definition is checked as \`job post\` checks it, before anything is sent (exit 3, nothing created or paid), and sent in the form the network's nodes take. --timeout is each job's timeout (whole minutes: 90m, 2h, 1h30m). SIMPLE lists the replicas once; SIMPLE-EXTEND also extends each job before its end, so the service keeps running; SCHEDULED lists them at each time of --schedule (a 5-field cron, UTC); INFINITE (--timeout 1h or more) lists a replacement --rotation-time before each job's end (default 20m) and stops the old job once the new one is ready, replaces a job that ends, fails or stays unhealthy, and throttles a crash loop (stopping the deployment after 8 throttled rounds). A new deployment is DRAFT; it pays from your shared vault (one per owner, made with your first deployment; \`--vault new\` gives it one of its own, \`--vault ADDRESS\` names one of yours), which \`gpunet deployment fund\` fills from your wallet before \`gpunet deployment start\`. --time-scale N (localnet only) divides every duration of the strategy by N, so a rehearsal of hours takes minutes. SIMPLE-EXTEND and INFINITE take an autoscaling policy behind gpunet's gateway (--max-replicas with --target-concurrency, and --min-replicas, --scale-down-after; the replicas start within its bounds) and a --budget in tokens; the network's hosted manager takes neither (docs/deployments.md, "Autoscaling").`,
    [
      [0, 'created'],
      [
        2,
        `usage: --replicas outside 1..${MAX_REPLICAS}, a bad --timeout, --rotation-time, --startup-timeout or --vault, --time-scale off the localnet; a bad policy (--min-replicas above --max-replicas, --max-replicas over 100, --target-concurrency 0 or less, --scale-down-after under 10s, a policy on SIMPLE or SCHEDULED), a --budget under one listing's deposit, or either against the network's hosted manager (nothing created)`,
      ],
      [
        3,
        'invalid definition or --schedule (nothing sent), no market fits the need (or --market does not, with --strict), or the manager refused the request',
      ],
      [
        4,
        '--start, and the vault cannot pay one timeout of every replica (the deployment is created: fund it, start it)',
      ],
      [5, 'the manager is unreachable or failing'],
      [7, '--vault names no vault of yours (nothing created)'],
      [6, "the manager refused the wallet's headers or the API key"],
    ],
  )

  static override examples = [
    '<%= config.bin %> deployment create --file llm.json --replicas 2 --timeout 2h',
    '<%= config.bin %> deployment create --file llm.json --replicas 2 --strategy SIMPLE --timeout 90m --name llm --json',
    '<%= config.bin %> deployment create --file svc.json --timeout 10m --time-scale 20   # localnet rehearsal: extensions within a minute',
    "<%= config.bin %> deployment create --file batch.json --strategy SCHEDULED --schedule '0 3 * * *' --timeout 1h",
    '<%= config.bin %> deployment create --file svc.json --strategy INFINITE --replicas 2 --timeout 2h --rotation-time 20m',
    '<%= config.bin %> deployment create --file llm.json --timeout 2h --network devnet --manager https://manager.example.org',
    '<%= config.bin %> deployment create --file svc.json --timeout 1h --min-replicas 0 --max-replicas 3 --target-concurrency 2 --budget 50',
  ]

  static override flags = {
    file: Flags.string({
      char: 'f',
      description: 'job definition file (JSON or YAML; - reads standard input)',
      helpValue: 'FILE',
      required: true,
    }),
    replicas: Flags.integer({
      description: `jobs kept running at once (1 to ${MAX_REPLICAS})`,
      default: 1,
      helpValue: 'N',
    }),
    strategy: Flags.string({
      description:
        'SIMPLE lists the replicas once; SIMPLE-EXTEND also extends each before its end; SCHEDULED lists them on --schedule; INFINITE rotates and heals them',
      options: [...CREATE_STRATEGIES],
      default: 'SIMPLE-EXTEND',
    }),
    timeout: Flags.string({
      description: "each job's timeout, in whole minutes: 90m, 2h, 1h30m",
      helpValue: 'DURATION',
      required: true,
    }),
    schedule: Flags.string({
      description: "SCHEDULED: when to list the replicas, a 5-field cron in UTC, e.g. '0 3 * * *'",
      helpValue: 'CRON',
    }),
    'rotation-time': Flags.string({
      description: "INFINITE: how long before a job's end its replacement is listed [default: 20m]",
      helpValue: 'DURATION',
    }),
    'startup-timeout': Flags.string({
      description:
        "INFINITE, gpunet's own opt-in: whole minutes a new job has to come online before it is replaced [default: none]",
      helpValue: 'DURATION',
    }),
    vault: Flags.string({
      description:
        'the vault it pays from: new (one of its own) or a vault address of yours [default: your shared vault]',
      helpValue: 'new|ADDRESS',
    }),
    name: Flags.string({description: "the deployment's name [default: the file's name]", helpValue: 'NAME'}),
    start: Flags.boolean({
      description:
        'start it once created; exit 4 when its vault cannot pay (the deployment stays, INSUFFICIENT_FUNDS): a new vault is empty, a shared one must cover its other running deployments too',
    }),
    'time-scale': Flags.integer({
      description: 'localnet only: divide every duration of the strategy by N (extensions within minutes)',
      helpValue: 'N',
    }),
    ...autoscaleFlags,
    market: marketFlag,
    ...placementFlags,
    ...deploymentFlags,
  }

  static paysOrDestroys = {what: 'vault', whenFlag: 'start'} as const

  async run(): Promise<DeploymentJson> {
    const {flags} = await this.parse(DeploymentCreate)
    const {network} = this.settings
    const note = (line: string) => this.note(line)
    // The policy and budget are checked before anything else is read or sent (exit 2).
    const autoscale = policyFromFlags(flags, flags.strategy)
    const budget = budgetFromFlag(flags.budget)
    refuseOnHostedManager(settingsNameHostedManager(this.settings), autoscale !== undefined || budget !== undefined)
    let placement: Placement | null = null
    const {body, warnings} = await createBody({
      file: flags.file,
      network,
      replicas: flags.replicas,
      strategy: flags.strategy,
      timeout: flags.timeout,
      name: flags.name,
      timeScale: flags['time-scale'],
      schedule: flags.schedule,
      rotationTime: flags['rotation-time'],
      startupTimeout: flags['startup-timeout'],
      vault: flags.vault,
      // --market (or a configured market) names the market, checked against a need; with a need and none named,
      // placement picks it; else the network's default (on localnet, the localnet's own).
      market: async (document) => {
        const given = this.settings.typed('market')
        const explicit = given !== undefined && given.from !== 'preset' ? new PublicKey(given.value) : null
        const asked = parseNeed(needOfFlags(flags))
        const need = jobNeed(asked, document)
        // A named market with no need is sent as named, without connecting (as before).
        if (explicit !== null && !needAsks(need)) return explicit.toBase58()
        const net = await connectMarket(this.settings, note)
        const strict = flags.strict
        const flagsAsked = needAsks({...asked, images: []})
        const choice = await chooseMarket(net, {explicit, need, payment: 'token', strict, flagsAsked, note})
        placement = choice?.placement ?? null
        return (choice?.market ?? explicit ?? net.defaultMarket).toBase58()
      },
    })
    if (placement) {
      for (const line of placementLines(placement)) this.say(line)
      this.say()
    }
    for (const w of warnings) this.note(`Warning: ${flags.file}:${w.line}:${w.column} ${w.path}: ${w.message}`)
    const connection = await this.manager()
    const replicaWarnings = this.replicaWarnings(autoscale?.max_replicas ?? flags.replicas, connection)
    const asked = {...body, ...(autoscale ? {autoscale: {...autoscale}} : {}), ...(budget ? {budget} : {})}
    let deployment = await policyRequest(() => connection.client.create(asked))
    // Started apart from the create (not with the API's autostart), so a vault short of the deposit still leaves
    // the new deployment's id on the screen.
    let refused: GpunetError | null = null
    if (flags.start) {
      try {
        await connection.client.start(deployment.id)
      } catch (error) {
        if (!isGpunetError(error)) throw error
        refused = new GpunetError(
          error.code,
          `created deployment ${deployment.id}, but it did not start: ${error.message}`,
          {
            exitCode: error.exitCode,
            hint: `fund it, then start it: gpunet deployment fund ${deployment.id} --sol 0.05 --tokens 10 && gpunet deployment start ${deployment.id}`,
            fields: {...error.fields, deployment: deployment.id},
          },
        )
      }
      deployment = await connection.client.get(deployment.id)
    }
    this.showDeployment(deployment)
    if (!refused) {
      this.say()
      this.say(
        deployment.status === 'DRAFT'
          ? `Fund its vault, then start it: gpunet deployment fund ${deployment.id} --sol 0.05 --tokens 10 && gpunet deployment start ${deployment.id}`
          : `Follow it: gpunet deployment events ${deployment.id} --follow`,
      )
    }
    const report = this.deploymentJson(deployment, connection, replicaWarnings)
    return this.failWithReport(placement ? {...report, placement} : report, refused)
  }
}
