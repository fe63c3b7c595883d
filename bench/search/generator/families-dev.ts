/** Resource families of developer platforms: code hosting, issue tracking, CI/CD, package registries. */
import type { FamilySpec } from './spec.js';

const repo = ['owner', 'repo'];

export const CODE_HOSTING: FamilySpec = {
  scope: ' in a repository',
  context: { owner: 'Workspace, user or organisation that owns the repository', repo: 'Repository slug', org: 'Organisation name' },
  resources: [
    { n: 'repository', p: 'repositories', id: 'repo_slug', in: ['owner'], f: '*name|Repository name; description|Short description; private:boolean|Whether the repository is private; default_branch|Name of the default branch', q: 'visibility:enum(public,private,all)|Filter by visibility; sort:enum(created,updated,pushed,name)|Sort field', v: 'list get create update delete search', x: { fork: 'Fork a {n} into your account or another workspace.', ['archive']: 'Archive a {n} so it becomes read-only.', ['transfer']: ['Transfer a {n} to another owner.', '*new_owner|User or organisation receiving the repository'] } },
    { n: 'branch', p: 'branches', id: 'branch', in: repo, f: '*name|Name of the new branch; *from_ref|Branch, tag or commit SHA to start from', v: 'list get create delete', x: { ['compare_*es']: ['Compare two branches and show commits and changed files between them.', '*base|Base branch; *head|Head branch'], protect: ['Set protection rules on a {n} (required reviews, status checks).', 'required_approvals:integer|Approvals needed before merging; require_status_checks:boolean|Require CI to pass'], rename: ['Rename a {n}.', '*new_name|New branch name'] } },
    { n: 'pull request', id: 'pull_number', in: repo, f: '*title|Title; *source_branch|Branch that contains the changes; destination_branch|Branch to merge into (defaults to the main branch); description|Body text, Markdown; draft:boolean|Open as draft; reviewers:array|Usernames to request a review from', q: 'state:enum(open,merged,declined,all)|State filter; author|Filter by author username', v: 'list get create update search', x: { merge: ['Merge a {n} into its destination branch.', 'merge_strategy:enum(merge_commit,squash,fast_forward)|How to merge; close_source_branch:boolean|Delete the source branch after merging'], decline: 'Decline (close without merging) a {n}.', approve: 'Approve a {n} as the authenticated user.', ['request_changes']: 'Request changes on a {n}, blocking it until resolved.', ['list_*_commits']: 'List the commits that a {n} adds.', ['get_*_diff']: 'Get the unified diff of a {n}.', ['list_*_files']: 'List files changed by a {n} with additions and deletions.' } },
    { n: 'pull request comment', id: 'comment_id', in: repo, f: '*pull_number:integer|Pull request number; *body|Comment text; path|File path for an inline comment; line:integer|Line number for an inline comment', v: 'list create update delete' },
    { n: 'commit', id: 'sha', in: repo, q: 'branch|Branch to list commits from; path|Only commits touching this path; since|ISO 8601 date', v: 'list get', x: { ['get_*_diff']: 'Get the diff introduced by a {n}.', ['get_*_status']: 'Get the combined build status for a {n}.', ['revert']: 'Create a new commit that reverts a {n}.' } },
    { n: 'tag', id: 'tag_name', in: repo, f: '*name|Tag name; *target|Commit SHA the tag points to; message|Annotation message', v: 'list get create delete' },
    { n: 'release', id: 'release_id', in: repo, f: '*tag_name|Tag to release; name|Release title; notes|Release notes in Markdown; prerelease:boolean|Mark as pre-release', v: 'list get create update delete', x: { ['upload_*_asset']: ['Upload a binary asset to a {n}.', '*file_path|Local file to upload; label|Display label'], ['get_latest_*!']: 'Get the most recent published {n}.' } },
    { n: 'file', id: 'path', in: repo, f: '*path|Path of the file in the repository; *content|New file content; *message|Commit message; branch|Branch to commit to', v: 'get create update delete', x: { ['get_*_contents']: ['Read the contents of a {n} or directory at a given ref.', 'ref|Branch, tag or commit'], ['get_*_blame']: 'Show who last changed each line of a {n}.', ['get_*_history']: 'List the commits that changed a {n}.' } },
    { n: 'webhook', id: 'hook_id', in: repo, f: '*url|Endpoint receiving the events; events:array|Events to subscribe to; secret|Shared secret used to sign payloads; active:boolean|Whether deliveries are sent', v: 'list get create update delete', x: { ['test']: 'Send a test delivery to a {n}.', ['list_*_deliveries']: 'List recent deliveries of a {n} with their response codes.' } },
    { n: 'deploy key', id: 'key_id', in: repo, f: '*title|Label for the key; *key|Public SSH key; read_only:boolean|Allow reads only', v: 'list get create delete' },
    { n: 'collaborator', id: 'username', in: repo, f: '*username|User to add; permission:enum(read,triage,write,maintain,admin)|Access level', v: 'list create delete', x: { ['get_*_permission']: 'Check the permission level a {n} has on a repository.' } },
    { n: 'code search result', v: '', x: { ['search_code!']: ['Search source code across repositories by text or symbol.', '*query|Text or regular expression to look for; language|Restrict to a language; path|Restrict to paths matching this glob'] } },
    { n: 'snippet', id: 'snippet_id', in: ['owner'], f: '*title|Snippet title; *content|Snippet body; visibility:enum(public,private)|Who can see it', v: 'list get create update delete' },
    { n: 'team', id: 'team_slug', in: ['org'], f: '*name|Team name; description|What the team is for; privacy:enum(secret,closed)|Visibility', v: 'list get create update delete', x: { ['add_*_member']: ['Add a user to a {n}.', '*username|User to add; role:enum(member,maintainer)|Role'], ['remove_*_member']: ['Remove a user from a {n}.', '*username|User to remove'] } },
    { n: 'ssh key', id: 'key_id', f: '*title|Label; *key|Public key in OpenSSH format', v: 'list create delete' },
  ],
};

export const ISSUE_TRACKING: FamilySpec = {
  scope: ' in a project',
  context: { project: 'Project key or ID', board: 'Board ID' },
  resources: [
    { n: 'issue', id: 'issue_id', in: ['project'], f: '*summary|One-line summary; description|Full description, Markdown; type:enum(bug,task,story,epic)|Issue type; priority:enum(lowest,low,medium,high,critical)|Priority; assignee|User to assign; labels:array|Labels to apply; due_date|Due date, YYYY-MM-DD', q: 'status|Workflow state name; assignee|Assignee username, or "me"; label|Label filter', v: 'list get create update delete search', x: { assign: ['Assign an {n} to a user.', '*assignee|Username or account ID'], transition: ['Move an {n} to another workflow state (e.g. In Progress, Done).', '*to_state|Target state name'], ['link_*s']: ['Link two issues (blocks, relates to, duplicates).', '*target_issue_id|Other issue; *link_type:enum(blocks,relates_to,duplicates,clones)|Relationship'], ['watch']: 'Start watching an {n} to get notified of changes.', ['get_*_history']: 'Get the change log of an {n}: who changed which field when.', ['clone']: 'Copy an {n} with its fields into a new one.' } },
    { n: 'comment', id: 'comment_id', in: ['project'], f: '*issue_id|Issue the comment belongs to; *body|Comment text', v: 'list create update delete' },
    { n: 'attachment', id: 'attachment_id', f: '*issue_id|Issue to attach to; *file_path|File to upload', v: 'list create delete', x: { download: 'Download an {n} to a local file.' } },
    { n: 'sprint', id: 'sprint_id', in: ['board'], f: '*name|Sprint name; start_date|Start date; end_date|End date; goal|Sprint goal', v: 'list get create update delete', x: { start: 'Start a planned {n}.', complete: ['Close a {n}; unfinished issues move to the backlog or next sprint.', 'move_open_issues_to|Sprint that receives unfinished issues'], ['move_issues_to_*']: ['Move issues into a {n}.', '*issue_ids:array|Issues to move'] } },
    { n: 'board', id: 'board_id', f: '*name|Board name; *project|Project the board shows; type:enum(scrum,kanban)|Board type', v: 'list get create delete', x: { ['get_*_backlog']: 'List the backlog of a {n} in rank order.', ['get_*_columns']: 'Show the columns of a {n} and the states mapped to them.' } },
    { n: 'project', id: 'project_key', f: '*name|Project name; *key|Short key used in issue IDs; lead|Project lead; description|What the project is about', v: 'list get create update delete', x: { archive: 'Archive a {n}.', ['list_*_components']: 'List the components of a {n}.' } },
    { n: 'epic', id: 'epic_id', in: ['project'], f: '*name|Epic name; summary|Summary; color|Display colour', v: 'list get create update', x: { ['list_*_issues']: 'List the issues that belong to an {n}.', ['add_issues_to_*']: ['Add issues to an {n}.', '*issue_ids:array|Issues to add'] } },
    { n: 'version', id: 'version_id', in: ['project'], f: '*name|Version name, e.g. 2.4.0; release_date|Planned release date; description|Notes', v: 'list get create update delete', x: { release: 'Mark a {n} as released.' } },
    { n: 'worklog', id: 'worklog_id', f: '*issue_id|Issue worked on; *time_spent|Duration, e.g. 2h 30m; comment|What was done; started|When work started', v: 'list create update delete' },
    { n: 'filter', id: 'filter_id', f: '*name|Filter name; *query|Query in the tracker query language; shared:boolean|Share with the project', v: 'list get create update delete' },
    { n: 'label', id: 'label', in: ['project'], f: '*name|Label text; color|Colour', v: 'list create delete' },
    { n: 'workflow', id: 'workflow_id', in: ['project'], v: 'list get', x: { ['list_*_transitions']: 'List the transitions available from each state of a {n}.' } },
    { n: 'custom field', id: 'field_id', f: '*name|Field name; *type:enum(text,number,date,select,user)|Field type', v: 'list get create delete' },
    { n: 'user', id: 'account_id', q: 'query|Name or e-mail to look for', v: 'list get search', x: { ['get_current_*!']: 'Get the {n} the API token belongs to.' } },
  ],
};

export const CI_CD: FamilySpec = {
  scope: '',
  context: { project: 'Project slug, e.g. org/repo', pipeline_id: 'Pipeline ID' },
  resources: [
    { n: 'pipeline', id: 'pipeline_id', in: ['project'], f: 'branch|Branch to build; *ref|Git ref to build; variables:object|Variables passed to the pipeline', q: 'branch|Only pipelines of this branch; status:enum(running,success,failed,canceled)|Status filter', v: 'list get create', x: { cancel: 'Cancel a running {n}.', retry: 'Re-run the failed jobs of a {n}.', ['get_*_duration_stats!']: 'Median and p95 durations of recent pipelines of a project.' } },
    { n: 'job', id: 'job_id', in: ['project'], q: 'status|Status filter; pipeline_id|Only jobs of this pipeline', v: 'list get', x: { ['get_*_log']: ['Fetch the console output (build log) of a {n}.', 'tail:integer|Only the last N lines'], retry: 'Retry a single {n}.', cancel: 'Cancel a {n}.', ['list_*_artifacts']: 'List the artifacts a {n} produced.', ['download_*_artifact']: ['Download one artifact of a {n}.', '*artifact_path|Path of the artifact'] } },
    { n: 'workflow', id: 'workflow_id', in: ['project'], v: 'list get', x: { trigger: ['Trigger a {n} run manually.', 'branch|Branch to run on; parameters:object|Input parameters'], ['rerun_*_from_failed']: 'Re-run a {n} starting from its failed jobs.', ['get_*_insights']: 'Success rate, duration and flaky tests of a {n} over time.' } },
    { n: 'schedule', id: 'schedule_id', in: ['project'], f: '*cron|Cron expression; *branch|Branch to build; description|What the schedule runs; active:boolean|Enabled', v: 'list get create update delete', x: { ['run_*_now']: 'Run a scheduled pipeline immediately.' } },
    { n: 'environment variable', id: 'name', in: ['project'], f: '*name|Variable name; *value|Value (stored encrypted); masked:boolean|Hide in logs; protected:boolean|Only for protected branches', v: 'list get create update delete' },
    { n: 'runner', id: 'runner_id', q: 'status:enum(online,offline,paused)|Status filter; tag|Runner tag', v: 'list get delete', x: { pause: 'Pause a {n} so it takes no new jobs.', resume: 'Resume a paused {n}.' } },
    { n: 'test report', id: 'job_id', in: ['project'], v: 'get', x: { ['list_flaky_tests!']: 'List tests that failed and passed on the same commit recently.', ['get_failed_tests']: 'List failing test cases of a build with their error messages.' } },
    { n: 'deployment', id: 'deployment_id', in: ['project'], f: '*environment|Target environment; *ref|Git ref to deploy; description|Notes', q: 'environment|Environment name', v: 'list get create', x: { rollback: 'Roll back to the previous successful {n}.', approve: 'Approve a {n} waiting for manual approval.' } },
    { n: 'environment', id: 'environment_id', in: ['project'], f: '*name|Environment name; url|External URL', v: 'list get create delete', x: { stop: 'Stop an {n} and tear down its review app.' } },
    { n: 'cache', id: 'cache_key', in: ['project'], v: 'list delete', x: { ['clear_all_caches!']: 'Clear every build cache of a project.' } },
    { n: 'config', in: ['project'], v: '', x: { ['validate_*!']: ['Validate a pipeline configuration file without running it.', '*content|The YAML configuration'], ['get_*!']: 'Get the effective (merged) pipeline configuration.' } },
    { n: 'context', id: 'context_id', f: '*name|Context name', v: 'list get create delete', x: { ['add_*_secret']: ['Add a secret to a shared {n}.', '*name|Secret name; *value|Secret value'] } },
  ],
};

export const PACKAGE_REGISTRY: FamilySpec = {
  scope: ' in the registry',
  context: { namespace: 'Organisation or namespace' },
  resources: [
    { n: 'package', id: 'package_name', in: ['namespace'], q: 'type:enum(npm,maven,pypi,docker,nuget)|Package format', v: 'list get delete search', x: { ['list_*_versions']: 'List published versions of a {n}.', ['deprecate_*_version']: ['Deprecate one version of a {n} with a message.', '*version|Version; *message|Deprecation message'], ['get_*_downloads']: 'Download counts of a {n} over time.', ['get_*_dependents']: 'List packages that depend on a {n}.' } },
    { n: 'vulnerability', id: 'advisory_id', q: 'severity:enum(low,moderate,high,critical)|Minimum severity; package_name|Affected package', v: 'list get', x: { ['scan_dependencies!']: ['Scan a lockfile for known vulnerabilities.', '*lockfile_path|Path to package-lock.json, poetry.lock, etc.'] } },
    { n: 'access token', id: 'token_id', f: '*name|Token label; scopes:array|Scopes; expires_in_days:integer|Expiry', v: 'list create delete' },
    { n: 'container image', id: 'image', in: ['namespace'], v: 'list get delete', x: { ['list_*_tags']: 'List tags of a {n} with digests and sizes.', ['delete_*_tag']: ['Delete one tag of a {n}.', '*tag|Tag name'], ['get_*_scan_results']: 'Get the vulnerability scan report of a {n} tag.' } },
    { n: 'retention policy', id: 'policy_id', in: ['namespace'], f: '*keep_last:integer|Versions to keep; older_than_days:integer|Delete versions older than this', v: 'list get create update delete' },
  ],
};
