import * as Flags from '@oclif/core/flags'
import {PublicKey} from '@solana/web3.js'

import {deploymentArg, DeploymentCommand, yesFlag} from '../../cli/deployment-command.js'
import {deploymentFlags, marketFlags} from '../../cli/flags.js'
import {
  checkVaultIsNotOwner,
  checkWithdraw,
  sendWithdraw,
  sharedText,
  vaultSharers,
} from '../../lib/deployments/client/client-vault.js'
import {type AmountJson, amountJson, formatAmount, parseAmount} from '../../lib/text/amounts.js'
import {readBalances, SOL_DECIMALS} from '../../lib/market/rpc/balances.js'
import {TOKEN_DECIMALS} from '../../lib/market/networks.js'
import {rpcCall} from '../../lib/market/rpc/rpc.js'
import {connectMarket} from '../../lib/network-connection.js'
import type {Network} from '../../lib/network.js'
import {startProgress} from '../../lib/terminal/progress.js'

interface WithdrawReport {
  network: Network
  deployment: string
  vault: string
  /** The other deployments paying from the same vault: what it keeps for them stays. */
  shared_with: string[]
  /** Null when the vault held nothing: nothing was signed or sent. */
  signature: string | null
  returned: {sol: AmountJson; tokens: AmountJson}
  wallet: {address: string; sol: AmountJson; tokens: AmountJson}
}

export default class DeploymentWithdraw extends DeploymentCommand {
  static override summary =
    "Return what a deployment's vault may give to your wallet: everything once nothing pays from it."

  static override description = `The vault is named, and the other deployments that pay from it (new deployments share your one shared vault). A vault keeps what its running deployments (STARTING, RUNNING, INSUFFICIENT_FUNDS) need for the next listing or extension of every replica, plus fees (docs/deployment-manager.md, "The floor"); the rest is yours, all of it once they are stopped. --sol and --tokens ask for those amounts instead (an absent one is 0): more than the vault may give is exit 4, nothing moved. Asks first at a terminal, unless --yes; without a terminal it refuses (exit 2) unless --yes. The manager answers a transaction its vault signed; gpunet checks that it does nothing else (it moves the vault's funds to your wallet and its token account, and your wallet pays only the fee: exit 5 otherwise, nothing signed), co-signs it as the fee payer, sends it and waits for it to be confirmed. A vault that may give nothing (its running deployments need all of it) is exit 2.`

  static override examples = [
    '<%= config.bin %> deployment withdraw 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    '<%= config.bin %> deployment stop 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --yes && <%= config.bin %> deployment withdraw 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --yes --json',
  ]

  static override args = deploymentArg
  static override flags = {
    sol: Flags.string({description: 'SOL to withdraw [default: all the vault may give]', helpValue: 'SOL'}),
    tokens: Flags.string({
      description: 'payment tokens to withdraw [default: all the vault may give]',
      helpValue: 'TOKENS',
    }),
    yes: yesFlag,
    rpc: marketFlags.rpc,
    'max-priority-fee': marketFlags['max-priority-fee'],
    ...deploymentFlags,
  }

  static paysOrDestroys = {what: 'vault'} as const

  async run(): Promise<WithdrawReport> {
    const {args, flags} = await this.parse(DeploymentWithdraw)
    const {network} = this.settings
    const note = (line: string) => this.note(line)
    // Checked before anything is asked or sent (or a localnet started): a bad amount is exit 2.
    const asked = flags.sol !== undefined || flags.tokens !== undefined
    const lamports = parseAmount(flags.sol ?? '0', SOL_DECIMALS, 'SOL')
    const tokens = parseAmount(flags.tokens ?? '0', TOKEN_DECIMALS, 'token')
    const connection = await this.manager()
    const deployment = await connection.client.get(args.id)
    const vault = new PublicKey(deployment.vault)
    // Before the question: a manager naming the wallet itself as the vault has nothing to give back.
    const wallet = await connection.wallet()
    checkVaultIsNotOwner(vault, wallet.publicKey)
    const sharers = await vaultSharers(connection.client, deployment.vault, args.id)
    const what = asked
      ? `${formatAmount(lamports, SOL_DECIMALS)} SOL and ${formatAmount(tokens, TOKEN_DECIMALS)} tokens`
      : 'everything'
    await this.confirmFirst(flags.yes, {
      question: `Withdraw ${what} the vault ${vault.toBase58()} of deployment ${args.id} may give to your wallet (${sharedText(sharers)})?`,
      doing: `withdraw the vault of deployment ${args.id}`,
      short: 'withdraw it',
    })
    const net = await connectMarket(this.settings, note)
    // The network's body is in SOL and tokens: the amounts given, checked above, as numbers.
    const ask = asked
      ? {SOL: Number(formatAmount(lamports, SOL_DECIMALS)), NOS: Number(formatAmount(tokens, TOKEN_DECIMALS))}
      : undefined
    const transaction = await connection.client.withdraw(vault.toBase58(), ask)
    let signature: string | null = null
    let returned = {lamports: 0n, tokens: 0n}
    if (transaction === null) {
      this.say(`The vault ${vault.toBase58()} holds nothing: nothing to withdraw.`)
    } else {
      const checked = checkWithdraw(transaction, wallet.publicKey, vault, net.mint, net.fees.maxPriorityFeeLamports)
      // The rent of the token accounts it closes comes back too: read before they are gone.
      const closed = await rpcCall(net.connection, () => net.connection.getMultipleAccountsInfo(checked.plan.closes))
      const rent = closed.reduce((sum, account) => sum + BigInt(account?.lamports ?? 0), 0n)
      const progress = startProgress(`Withdrawing the vault ${vault.toBase58()} to ${wallet.address}`)
      try {
        signature = await sendWithdraw(net, wallet, checked.transaction)
      } finally {
        progress.stop()
      }
      returned = {lamports: checked.plan.lamports + rent, tokens: checked.plan.tokens}
    }
    const own = await rpcCall(net.connection, () => readBalances(net.connection, wallet.publicKey, net.mint))
    const report: WithdrawReport = {
      network,
      deployment: args.id,
      vault: vault.toBase58(),
      shared_with: sharers,
      signature,
      returned: {
        sol: amountJson(returned.lamports, SOL_DECIMALS, 'SOL'),
        tokens: amountJson(returned.tokens, TOKEN_DECIMALS, 'token'),
      },
      wallet: {
        address: wallet.address,
        sol: amountJson(own.lamports, SOL_DECIMALS, 'SOL'),
        tokens: amountJson(own.tokens, TOKEN_DECIMALS, 'token'),
      },
    }
    if (signature) {
      this.say(
        `Withdrew ${report.returned.sol.amount} SOL and ${report.returned.tokens.amount} tokens from the vault ${vault.toBase58()} of deployment ${args.id} to ${wallet.address}.`,
      )
      if (sharers.length > 0) this.say(`What it keeps pays for the deployments on it: ${sharedText(sharers)}.`)
    }
    return report
  }
}
