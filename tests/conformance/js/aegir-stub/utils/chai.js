// The chai that aegir/chai exports: chai with the plugins the suites' assertions use.
import chai from 'chai'
import chaiAsPromised from 'chai-as-promised'
import chaiParentheses from 'chai-parentheses'
import chaiSubset from 'chai-subset'
import chaiBites from 'chai-bites'
import chaiString from 'chai-string'

// chai-as-promised must come first (it wraps the assertions added later).
chai.use(chaiAsPromised)
chai.use(chaiParentheses)
chai.use(chaiSubset)
chai.use(chaiBites)
chai.use(chaiString)

export const expect = chai.expect
export const assert = chai.assert
export { chai }
