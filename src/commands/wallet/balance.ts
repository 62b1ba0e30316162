import {BaseCommand} from '../../cli/base-command.js'
import {marketFlags} from '../../cli/flags.js'
import {type AmountJson, amountJson} from '../../lib/text/amounts.js'
import {readBalances, SOL_DECIMALS} from '../../lib/market/rpc/balances.js'
import {rpcCall} from '../../lib/market/rpc/rpc.js'
import {TOKEN_DECIMALS} from '../../lib/market/networks.js'
import {amountText, reportLines} from '../../lib/market/jobs/report.js'
import {connectMarket} from '../../lib/network-connection.js'
import type {Network} from '../../lib/network.js'
import {openWallet} from '../../lib/keys/wallet.js'

interface BalanceReport {
  network: Network
  address: string
  sol: AmountJson
  tokens: AmountJson
  /** The wallet's associated token account of the network's token, and whether it exists yet. */
  tokenAccount: {address: string; exists: boolean}
}

export default class WalletBalance extends BaseCommand {
  static override summary = "Show the wallet's SOL and token balances on a network."
  static override description =
    "SOL pays transaction fees and rent; the network's token pays for jobs. On localnet a missing default wallet is created (and `localnet fund` tops it up); elsewhere it must exist (exit 3)."

  static override examples = [
    '<%= config.bin %> wallet balance',
    '<%= config.bin %> wallet balance --network devnet --json',
  ]

  static override flags = {
    network: marketFlags.network,
    profile: marketFlags.profile,
    rpc: marketFlags.rpc,
    wallet: marketFlags.wallet,
  }

  async run(): Promise<BalanceReport> {
    await this.parse(WalletBalance)
    const {network} = this.settings
    const note = (line: string) => this.note(line)
    const net = await connectMarket(this.settings, note)
    const wallet = await openWallet(this.settings, {note})
    const balances = await rpcCall(net.connection, () => readBalances(net.connection, wallet.publicKey, net.mint))
    const report: BalanceReport = {
      network,
      address: wallet.address,
      sol: amountJson(balances.lamports, SOL_DECIMALS, 'SOL'),
      tokens: amountJson(balances.tokens, TOKEN_DECIMALS, 'token'),
      tokenAccount: {address: balances.tokenAccount.toBase58(), exists: balances.hasTokenAccount},
    }
    const rows: [string, string | null][] = [
      ['Network', network],
      ['Wallet', report.address],
      ['SOL', amountText(report.sol)],
      ['Tokens', `${amountText(report.tokens)}${balances.hasTokenAccount ? '' : ' (no token account yet)'}`],
    ]
    for (const line of reportLines(rows)) this.say(line)
    return report
  }
}
