import * as Flags from '@oclif/core/flags'
import {PublicKey} from '@solana/web3.js'

import {deploymentArg, DeploymentCommand} from '../../cli/deployment-command.js'
import {deploymentFlags, marketFlags} from '../../cli/flags.js'
import {fundVault, sharedText, vaultSharers} from '../../lib/deployments/client/client-vault.js'
import {ExitCode, GpunetError} from '../../lib/errors.js'
import {type AmountJson, amountJson, formatAmount, parseAmount} from '../../lib/text/amounts.js'
import {SOL_DECIMALS} from '../../lib/market/rpc/balances.js'
import {confirmSpend} from '../../lib/market/rpc/confirm.js'
import {TOKEN_DECIMALS} from '../../lib/market/networks.js'
import {type FeeJson, feeJson} from '../../lib/market/rpc/send.js'
import {connectMarket} from '../../lib/network-connection.js'
import type {Network} from '../../lib/network.js'
import {startProgress} from '../../lib/terminal/progress.js'

interface FundReport {
  network: Network
  deployment: string
  vault: string
  /** The other deployments paying from the same vault (the owner's shared vault): funding it funds them too. */
  shared_with: string[]
  signature: string
  sent: {sol: AmountJson; tokens: AmountJson}
  balance: {sol: AmountJson; tokens: AmountJson}
  fee: FeeJson
}

export default class DeploymentFund extends DeploymentCommand {
  static override summary = "Send SOL and payment tokens from your wallet to a deployment's vault, which pays its jobs."

  static override description = `The vault pays each job's deposit (tokens) and the fees and rent of listing it (SOL). A start needs what one timeout of every replica costs; SIMPLE-EXTEND pays each extension from it too. New deployments share your one shared vault (unless created with --vault new): funding it funds every deployment on it, and the command names the vault and the others that pay from it. One transaction, sent after the wallet was checked to hold the amounts (exit 4 otherwise, nothing sent). On devnet and mainnet the amounts are confirmed first, unless --yes. \`gpunet deployment withdraw\` returns everything to your wallet once the deployment is stopped.`

  static override examples = [
    '<%= config.bin %> deployment fund 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --sol 0.05 --tokens 10',
    '<%= config.bin %> deployment fund 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --tokens 25 --json',
  ]

  static override args = deploymentArg
  static override flags = {
    sol: Flags.string({description: 'SOL to send (fees and rent of its jobs)', helpValue: 'SOL'}),
    tokens: Flags.string({description: 'payment tokens to send (its jobs\u2019 deposits)', helpValue: 'TOKENS'}),
    yes: Flags.boolean({char: 'y', description: 'on devnet and mainnet, send without asking'}),
    rpc: marketFlags.rpc,
    'priority-fee': marketFlags['priority-fee'],
    'max-priority-fee': marketFlags['max-priority-fee'],
    ...deploymentFlags,
  }

  static paysOrDestroys = {what: 'wallet'} as const

  async run(): Promise<FundReport> {
    const {args, flags} = await this.parse(DeploymentFund)
    const {network} = this.settings
    const lamports = parseAmount(flags.sol ?? '0', SOL_DECIMALS, 'SOL')
    const tokens = parseAmount(flags.tokens ?? '0', TOKEN_DECIMALS, 'token')
    if (lamports === 0n && tokens === 0n) {
      throw new GpunetError('nothing_to_fund', 'nothing to send: give --sol, --tokens or both', {
        exitCode: ExitCode.USAGE,
        hint: 'e.g. --sol 0.05 --tokens 10',
      })
    }
    const note = (line: string) => this.note(line)
    const connection = await this.manager()
    const deployment = await connection.client.get(args.id)
    const vault = new PublicKey(deployment.vault)
    const sharers = await vaultSharers(connection.client, deployment.vault, args.id)
    const what = `${formatAmount(lamports, SOL_DECIMALS)} SOL and ${formatAmount(tokens, TOKEN_DECIMALS)} tokens`
    await confirmSpend(
      network,
      `Send ${what} from your wallet to the vault ${vault.toBase58()} of deployment ${args.id} (${sharedText(sharers)})?`,
      flags.yes,
    )
    const net = await connectMarket(this.settings, note)
    const progress = startProgress(`Sending ${what} to the vault ${vault.toBase58()}`)
    let funded
    try {
      funded = await fundVault(net, await connection.wallet(), vault, {lamports, tokens})
    } finally {
      progress.stop()
    }
    const balance = {
      sol: amountJson(funded.vault.lamports, SOL_DECIMALS, 'SOL'),
      tokens: amountJson(funded.vault.tokens, TOKEN_DECIMALS, 'token'),
    }
    this.say(`Sent ${what} to the vault of deployment ${args.id}.`)
    this.say(`The vault ${vault.toBase58()} holds ${balance.sol.amount} SOL and ${balance.tokens.amount} tokens.`)
    if (sharers.length > 0) this.say(`It pays for them all: ${sharedText(sharers)}.`)
    return {
      network,
      deployment: args.id,
      vault: vault.toBase58(),
      shared_with: sharers,
      signature: funded.signature,
      sent: {sol: amountJson(lamports, SOL_DECIMALS, 'SOL'), tokens: amountJson(tokens, TOKEN_DECIMALS, 'token')},
      balance,
      fee: feeJson(funded.fee),
    }
  }
}
