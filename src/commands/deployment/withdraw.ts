import {PublicKey} from '@solana/web3.js'

import {deploymentArg, DeploymentCommand, yesFlag} from '../../cli/deployment-command.js'
import {deploymentFlags, marketFlags} from '../../cli/flags.js'
import {checkState} from '../../lib/deployments/client/client-states.js'
import {checkVaultIsNotOwner, checkWithdraw, sendWithdraw} from '../../lib/deployments/client/client-vault.js'
import {type AmountJson, amountJson} from '../../lib/text/amounts.js'
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
  /** Null when the vault held nothing: nothing was signed or sent. */
  signature: string | null
  returned: {sol: AmountJson; tokens: AmountJson}
  wallet: {address: string; sol: AmountJson; tokens: AmountJson}
}

export default class DeploymentWithdraw extends DeploymentCommand {
  static override summary = "Return everything a stopped deployment's vault holds to your wallet."

  static override description = `Asks first at a terminal, unless --yes; without a terminal it refuses (exit 2) unless --yes. The manager answers a transaction its vault signed, moving all of its SOL and tokens to you; gpunet checks that it does nothing else (it moves the vault's funds to your wallet and its token account, and your wallet pays only the fee: exit 5 otherwise, nothing signed), co-signs it as the fee payer, sends it and waits for it to be confirmed. A deployment whose jobs may run (STARTING, RUNNING, STOPPING, INSUFFICIENT_FUNDS) is exit 2: stop it first.`

  static override examples = [
    '<%= config.bin %> deployment withdraw 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    '<%= config.bin %> deployment stop 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --yes && <%= config.bin %> deployment withdraw 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU --yes --json',
  ]

  static override args = deploymentArg
  static override flags = {
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
    const connection = await this.manager()
    const deployment = await connection.client.get(args.id)
    checkState(deployment, 'withdraw')
    const vault = new PublicKey(deployment.vault)
    // Before the question: a manager naming the wallet itself as the vault has nothing to give back.
    const wallet = await connection.wallet()
    checkVaultIsNotOwner(vault, wallet.publicKey)
    await this.confirmFirst(flags.yes, {
      question: `Withdraw everything the vault ${vault.toBase58()} of deployment ${args.id} holds to your wallet?`,
      doing: `withdraw the vault of deployment ${args.id}`,
      short: 'withdraw it',
    })
    const net = await connectMarket(this.settings, note)
    const transaction = await connection.client.withdraw(vault.toBase58())
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
        `Withdrew ${report.returned.sol.amount} SOL and ${report.returned.tokens.amount} tokens from the vault of deployment ${args.id} to ${wallet.address}.`,
      )
    }
    return report
  }
}
