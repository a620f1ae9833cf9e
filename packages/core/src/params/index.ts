export { parseParamsField } from './parse.js';
export { resolveStartParams, type ResolveParamsResult } from './resolve.js';
export { formatDefaultParams, paramNames, renderParamDefs, type ParamDefPayload } from './format.js';
export { splitShellWords, quoteShellValue } from './shell-words.js';
export { isReservedParamName } from './reserved.js';
