/**
 * The networks gpunet talks to, and the shape of a setting in force: what every layer below the commands takes
 * (settings.ts resolves them once per command).
 */

/** The networks gpunet talks to; localnet is the default so nobody spends real tokens by accident. */
export const NETWORKS = ['localnet', 'devnet', 'mainnet'] as const
export type Network = (typeof NETWORKS)[number]

/** Where a setting's value may come from, highest first. */
export const SETTING_LAYERS = ['flag', 'env', 'profile', 'config', 'preset'] as const
export type SettingLayer = (typeof SETTING_LAYERS)[number]

/** A setting's value in force and where it comes from. */
export interface InForce {
  value: string
  from: SettingLayer
  /** As `config list` shows it: `flag`, `env GPUNET_RPC_URL`, `profile dev`, `config networks.devnet`, `preset`. */
  source: string
}

/** A setting in force as its kind reads it (settings/kinds.ts): its value, the text it was given as, and its source. */
export interface Typed<T> {
  value: T
  text: string
  from: SettingLayer
  /** As InForce's `source`. */
  source: string
}
