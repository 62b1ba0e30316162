import {postgresAdapter} from '../../../helpers/secrets-postgres.js'
import {secretsServiceSuites} from './server-suites.js'

secretsServiceSuites([postgresAdapter])
