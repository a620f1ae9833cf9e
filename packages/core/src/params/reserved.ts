/**
 * Names a param the DAG does not declare may not take. A run's params become environment
 * variables of its steps, so an undeclared `PATH`, `LD_PRELOAD` or `BASH_ENV` would choose the
 * programs a step runs, and `DAG_RUN_ID` would lie about the run. A DAG that declares such a
 * name has chosen to let callers set it.
 */
const RESERVED_NAMES = new Set([
  // forwarded from the host (see the contract's environment filter)
  'PATH', 'HOME', 'USER', 'SHELL', 'TMPDIR', 'TERM', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ',
  'DOCKER_HOST', 'DOCKER_CERT_PATH', 'DOCKER_TLS_VERIFY', 'DOCKER_CONFIG', 'CONTAINER_HOST',
  // set by the service for steps
  'ITEM', 'WEBHOOK_PAYLOAD',
  // read by shells and runtimes at start-up: each can make a step run other code
  'ENV', 'BASH_ENV', 'IFS', 'CDPATH', 'PS4', 'SHELLOPTS', 'BASHOPTS', 'GLOBIGNORE', 'PROMPT_COMMAND',
  'ZDOTDIR', 'PERL5OPT', 'PERL5LIB', 'PERLLIB', 'PERL5DB', 'RUBYOPT', 'RUBYLIB', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH',
  'GCONV_PATH', 'HOSTALIASES', 'RESOLV_HOST_CONF', 'LOCALDOMAIN', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'CURL_CA_BUNDLE', 'EDITOR', 'VISUAL', 'PAGER',
]);
// Whole families of runtime hooks: GIT_SSH_COMMAND, GIT_EXEC_PATH, PYTHONSTARTUP, PYTHONBREAKPOINT, NODE_OPTIONS, ...
const RESERVED_PREFIXES = ['DAG_', 'SVC_', 'LC_', 'KUBERNETES_', 'TRELLIS_', 'LD_', 'DYLD_', 'BASH_FUNC_', 'GIT_', 'PYTHON', 'NODE_', 'NPM_CONFIG_', 'npm_config_'];

export function isReservedParamName(name: string): boolean {
  return RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix));
}
