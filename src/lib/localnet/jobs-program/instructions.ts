/**
 * The jobs program's 19 instructions as the deployed program declares and runs them
 * (reference/jobs-program-constraints.md section 4), one file each: its accounts in the program's order with
 * their declared type, `mut`, `init`, `close` and constraints (with their errors, in the program's order), and
 * the handler's effects. execute.ts runs them in Anchor's phases.
 */
import type {JobsInstructionName} from '../../market/codec/instructions.js'
import {assign} from './instructions/assign.js'
import {claim} from './instructions/claim.js'
import {clean} from './instructions/clean.js'
import {cleanAdmin} from './instructions/clean-admin.js'
import {close} from './instructions/close.js'
import {closeAdmin} from './instructions/close-admin.js'
import {complete} from './instructions/complete.js'
import {delist} from './instructions/delist.js'
import {end} from './instructions/end.js'
import {extend} from './instructions/extend.js'
import {finish} from './instructions/finish.js'
import {list} from './instructions/list.js'
import {open} from './instructions/open.js'
import {quit} from './instructions/quit.js'
import {quitAdmin} from './instructions/quit-admin.js'
import {recover} from './instructions/recover.js'
import type {InstructionDef} from './instruction-kit.js'
import {stop} from './instructions/stop.js'
import {update} from './instructions/update.js'
import {work} from './instructions/work.js'

export type {InstructionDef} from './instruction-kit.js'

/** The program, instruction by instruction, in the order of reference section 4 (the IDL's). */
export const INSTRUCTIONS: {[N in JobsInstructionName]: InstructionDef<N>} = {
  open,
  update,
  close,
  closeAdmin,
  assign,
  list,
  delist,
  recover,
  extend,
  end,
  work,
  stop,
  claim,
  complete,
  finish,
  quit,
  quitAdmin,
  clean,
  cleanAdmin,
}
