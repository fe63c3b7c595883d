/**
 * The environment variable names the shipped policies let a stdio server entry set, or not.
 *
 * The threat: a config line — often pasted from an `mcp.json` found online, or imported from
 * another MCP host's config — sets variables on a command that looks harmless (`npx some-server`).
 * Many variables turn such a command into arbitrary code, a man in the middle, or a package
 * from somewhere else, without the command or its arguments showing anything: a runtime's
 * options or preload hooks (`NODE_OPTIONS=--require /tmp/x.js`), the dynamic loader
 * (`LD_PRELOAD`), a TLS library's config file (`OPENSSL_CONF` loads a shared object of the file's
 * choosing into every process that starts OpenSSL — node included), a tool's config file
 * (`HOME` or `XDG_CONFIG_HOME` pointing at a directory whose `.npmrc` names another registry and
 * turns TLS checks off; `PIP_CONFIG_FILE`, `KUBECONFIG`, `GIT_CONFIG_GLOBAL`…), a package
 * manager's index or toolchain (`UV_INDEX_URL`, `GOPROXY`, `GOFLAGS=-toolexec=…`,
 * `RUSTUP_TOOLCHAIN`), a CA bundle (`NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`), a proxy
 * (`HTTPS_PROXY`), or a daemon to drive (`DOCKER_HOST`, `SSH_AUTH_SOCK`).
 *
 * The default policy denies those by name ({@link DEFAULT_STDIO_DENIED_ENV}); no deny-list is
 * ever complete, so the strict policy allows only the names in {@link STRICT_STDIO_ALLOWED_ENV}
 * (locale, time zone, colour and debug switches) and the deny-list still applies on top.
 * Globs are case-insensitive (`*` any run, `?` one character). `policies/README.md` says what
 * these rules cannot stop.
 */

/** Denied under the default (and strict) policy, grouped by what the variable does. */
export const DEFAULT_STDIO_DENIED_ENV: readonly string[] = Object.freeze([
  // The dynamic loader and the C library: preloads, library and module search paths.
  'LD_*', 'DYLD_*', 'GCONV_PATH', 'GLIBC_TUNABLES', 'LOCPATH', 'HOSTALIASES', 'RES_OPTIONS', 'LOCALDOMAIN',
  // Shells: startup files, imported functions (Shellshock, CVE-2014-6271), traced prompts.
  'BASH_ENV', 'ENV', 'BASH_FUNC_*', 'SHELLOPTS', 'BASHOPTS', 'PROMPT_COMMAND', 'PS4', 'IFS', 'CDPATH', 'ZDOTDIR', 'SHELL',
  // Programs other programs start on their own (pagers, editors, browsers, input filters).
  'EDITOR', 'VISUAL', 'PAGER', 'MANPAGER', 'LESSOPEN', 'LESSCLOSE', 'BROWSER', 'TERMINFO', 'TERMINFO_DIRS',
  // Where tools find their per-user configuration (npm's .npmrc, git's config, pip.conf, ssh…).
  'HOME', 'XDG_*', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'HOMEDRIVE', 'HOMEPATH', 'PROGRAMDATA', 'TMPDIR', 'TEMP', 'TMP',
  '*_CONFIG_FILE', '*_CONFIG_DIR', '*_CONFIG_HOME', 'NETRC', 'CURL_HOME', 'WGETRC', 'INPUTRC',
  // Windows command resolution and PowerShell modules.
  'COMSPEC', 'PATHEXT', 'PSMODULEPATH', 'SYSTEMROOT', 'WINDIR',
  // Proxies: every `*_PROXY`, in either case (NO_PROXY and ALL_PROXY included).
  '*_PROXY', 'GRPC_PROXY_EXP',
  // TLS: OpenSSL configuration (engines, providers), CA bundles, key logging.
  'OPENSSL_*', 'SSL_CERT_*', 'SSLKEYLOGFILE', 'NODE_EXTRA_CA_CERTS', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'AWS_CA_BUNDLE',
  'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH', 'NIX_SSL_CERT_FILE', 'HTTPLIB2_CA_CERTS',
  // Node.js and Electron.
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_TLS_REJECT_UNAUTHORIZED', 'NODE_REPL_EXTERNAL_MODULE', 'NODE_COMPILE_CACHE', 'NODE_ICU_DATA',
  'NODE_REDIRECT_WARNINGS', 'NODE_V8_COVERAGE', 'ELECTRON_RUN_AS_NODE',
  // Node package managers and launchers (registry, userconfig, script shell, cafile, strict-ssl).
  'NPM_*', 'YARN_*', 'PNPM_*', 'COREPACK_*', 'BUN_*', 'DENO_*', 'VOLTA_*', 'NVM_*', 'FNM_*',
  // Python and its installers (site-packages and .pth files, import hooks, indexes, interpreters).
  'PYTHONSTARTUP', 'PYTHONPATH', 'PYTHONHOME', 'PYTHONUSERBASE', 'PYTHONWARNINGS', 'PYTHONHTTPSVERIFY', 'PYTHONINSPECT',
  'PYTHONBREAKPOINT', 'PYTHONPYCACHEPREFIX', 'PYTHONEXECUTABLE', 'PYTHONPLATLIBDIR', 'VIRTUAL_ENV', 'CONDA_*',
  'PIP_*', 'PIPX_*', 'UV_*', 'POETRY_*', 'PDM_*', 'HATCH_*',
  // Perl, Ruby, PHP, Lua, Tcl, R, Erlang/Elixir, Julia.
  'PERL5OPT', 'PERL5LIB', 'PERLLIB', 'PERL5DB', 'RUBYOPT', 'RUBYLIB', 'GEM_*', 'GEMRC', 'BUNDLE_*', 'BUNDLER_*', 'IRBRC',
  'PHPRC', 'PHP_INI_SCAN_DIR', 'LUA_INIT*', 'LUA_PATH*', 'LUA_CPATH*', 'TCL_LIBRARY', 'TK_LIBRARY', 'TCLLIBPATH',
  'R_PROFILE*', 'R_ENVIRON*', 'R_LIBS*', 'ERL_*', 'ELIXIR_ERL_OPTIONS', 'JULIA_DEPOT_PATH', 'JULIA_LOAD_PATH',
  // Java and the JVM build tools (agents, class paths, init scripts, which java runs).
  'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'JAVA_OPTS', 'JAVA_HOME', 'CLASSPATH', 'MAVEN_OPTS', 'MAVEN_ARGS',
  'M2_HOME', 'MAVEN_HOME', 'GRADLE_OPTS', 'GRADLE_USER_HOME', 'SBT_OPTS', 'KOTLIN_HOME',
  // .NET (startup hooks, profilers, additional dependencies, which runtime runs).
  'DOTNET_STARTUP_HOOKS', 'DOTNET_ADDITIONAL_DEPS', 'DOTNET_SHARED_STORE', 'DOTNET_ROOT*', 'CORECLR_*', 'COR_*', 'COMPLUS_*',
  // Go (toolexec flags, module proxy and checksum database, toolchain downloads, cgo flags).
  'GOFLAGS', 'GOPROXY', 'GONOPROXY', 'GOPRIVATE', 'GOSUMDB', 'GONOSUMDB', 'GONOSUMCHECK', 'GOINSECURE', 'GOAUTH', 'GOPATH',
  'GOROOT', 'GOTOOLCHAIN', 'GOENV', 'GOMODCACHE', 'GOCACHE', 'GOBIN', 'GOWORK', 'GOVCS', 'GOEXPERIMENT', 'CGO_*',
  // Rust (cargo config and runners, rustup toolchains and mirrors, compiler wrappers).
  'CARGO_*', 'RUSTUP_*', 'RUSTC', 'RUSTC_*', 'RUSTDOC', 'RUSTFLAGS', 'RUSTDOCFLAGS',
  // Version control, SSH and GnuPG (git config, hooks and helpers; agent sockets; askpass programs).
  'GIT_*', 'SSH_*', 'GNUPG*', 'GPG_*',
  // Container and cluster clients (which daemon or cluster, with which credentials).
  'KUBECONFIG', 'DOCKER_*', 'CONTAINER_HOST', 'CONTAINERS_*', 'PODMAN_*', 'BUILDKIT_*', 'HELM_*',
  // Cloud CLIs: config and credential files (an AWS profile's credential_process runs a command), endpoints.
  'AWS_SHARED_CREDENTIALS_FILE', 'AWS_ENDPOINT_URL*', 'CLOUDSDK_CONFIG', 'GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES',
  'KRB5_CONFIG', 'KRB5CCNAME',
  // GUI toolkits' plugin paths, loaded as code.
  'QT_PLUGIN_PATH', 'GTK_PATH', 'GTK_MODULES', 'GIO_MODULE_DIR', 'GST_PLUGIN_PATH', 'SASL_PATH',
]);

/**
 * Allowed under the strict policy (and still subject to the deny-list): names that select a
 * locale, a time zone, colour output or debug output, and that no tool reads as a path to code or
 * configuration. An operator adds the names their servers need (`GITHUB_PERSONAL_ACCESS_TOKEN`,
 * `MYAPP_*`) in a copy of the policy.
 */
export const STRICT_STDIO_ALLOWED_ENV: readonly string[] = Object.freeze([
  'LANG', 'LANGUAGE', 'LC_*', 'TZ', 'NO_COLOR', 'FORCE_COLOR', 'DEBUG', 'NODE_ENV',
  'PYTHONUNBUFFERED', 'PYTHONIOENCODING', 'PYTHONDONTWRITEBYTECODE',
]);
