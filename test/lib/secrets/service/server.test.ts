import {sqliteAdapter} from '../../../helpers/secrets.js'
import {secretsServiceSuites} from './server-suites.js'

secretsServiceSuites([sqliteAdapter])
