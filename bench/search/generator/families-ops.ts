/** Resource families of operations: monitoring, logs, on-call, error tracking, flags, caches, streams, CDN, vaults. */
import type { FamilySpec } from './spec.js';

export const MONITORING: FamilySpec = {
  scope: '',
  context: { org: 'Organisation ID' },
  resources: [
    { n: 'metric', id: 'metric_name', q: 'prefix|Name prefix; tag|Tag filter', v: 'list get', x: { ['query_*s!']: ['Query a metric time series with an expression over a time range.', '*expression|Query, e.g. avg:cpu.usage{env:prod} by {host}; *from|Start (ISO 8601 or relative like -1h); to|End; step|Resolution'], ['get_*_metadata']: 'Unit, type and description of a {n}.' } },
    { n: 'dashboard', id: 'dashboard_id', f: '*title|Dashboard title; widgets:array|Widget definitions; description|Description', q: 'query|Title contains', v: 'list get create update delete search', x: { ['share']: 'Create a public link to a {n}.', ['clone']: 'Duplicate a {n}.' } },
    { n: 'alert rule', id: 'rule_id', f: '*name|Rule name; *query|Condition expression; *threshold:number|Value that triggers; severity:enum(info,warning,critical)|Severity; notify:array|Channels or people to notify', q: 'state:enum(ok,alerting,no_data,muted)|Current state', v: 'list get create update delete', x: { mute: ['Silence an {n} for a period.', 'duration_minutes:integer|How long'], unmute: 'Unmute an {n}.', ['get_*_history']: 'Past state changes of an {n}.' } },
    { n: 'silence', id: 'silence_id', f: '*matchers:array|Label matchers; *ends_at|End of the silence; comment|Why', v: 'list create delete' },
    { n: 'synthetic check', id: 'check_id', f: '*url|URL to probe; *interval_s:integer|Check frequency; locations:array|Probe locations', v: 'list get create update delete', x: { ['run_*_now']: 'Run a {n} immediately and return the result.', ['get_*_results']: 'Recent results of an uptime {n}.' } },
    { n: 'service level objective', id: 'slo_id', f: '*name|SLO name; *target:number|Target, e.g. 99.9; *window_days:integer|Rolling window; *good_events_query|Good events; *total_events_query|All events', v: 'list get create update delete', x: { ['get_error_budget']: 'Remaining error budget and burn rate of a {n}.' } },
    { n: 'host', id: 'hostname', q: 'filter|Hostname or tag filter', v: 'list get', x: { ['get_*_metrics']: 'CPU, memory, disk and network of a {n}.', ['mute']: 'Mute alerts for a {n}.' } },
    { n: 'trace', id: 'trace_id', q: 'service|Service name; min_duration_ms:integer|Slowest only; operation|Operation name', v: 'list get search', x: { ['get_service_map!']: 'Dependencies between services with request rates and errors.' } },
    { n: 'annotation', id: 'annotation_id', f: '*text|Annotation text; *time|When; tags:array|Tags', v: 'list create delete' },
    { n: 'notification channel', id: 'channel_id', f: '*type:enum(email,slack,webhook,pagerduty)|Type; *target|Address, URL or key', v: 'list get create delete', x: { test: 'Send a test notification to a {n}.' } },
  ],
};

export const LOGGING: FamilySpec = {
  scope: '',
  context: { index: 'Log index or stream' },
  resources: [
    { n: 'log', v: '', x: { ['search_*s!']: ['Search log events with a query over a time range.', '*query|Query, e.g. service:api status:500; *from|Start; to|End; limit:integer|Events'], ['tail_*s!']: ['Stream the newest log events as they arrive.', 'query|Filter; seconds:integer|How long to follow'], ['aggregate_*s!']: ['Count or group log events, e.g. errors per service per hour.', '*query|Filter; *group_by:array|Fields; interval|Bucket size'], ['get_*_context!']: ['Log lines before and after one event.', '*event_id|Event; lines:integer|Lines each side'] } },
    { n: 'saved search', p: 'saved searches', id: 'search_id', f: '*name|Name; *query|Query', v: 'list get create delete' },
    { n: 'log pipeline', id: 'pipeline_id', f: '*name|Name; *filter|Which logs; processors:array|Parsers and remappers', v: 'list get create update delete' },
    { n: 'log index', p: 'log indexes', id: 'index_name', f: '*name|Index name; retention_days:integer|Retention', v: 'list get create update' },
    { n: 'log archive', id: 'archive_id', f: '*destination|Bucket URL; query|Which logs', v: 'list create delete', x: { ['rehydrate']: ['Load archived logs back for searching.', '*from|Start; *to|End'] } },
    { n: 'log pattern', v: '', x: { ['list_*s!']: ['Cluster log messages into patterns with counts.', '*query|Filter; *from|Start'] } },
    { n: 'exclusion filter', id: 'filter_id', f: '*query|Logs to drop; sample_rate:number|Keep this fraction', v: 'list create delete' },
  ],
};

export const ON_CALL: FamilySpec = {
  scope: '',
  context: { service_id: 'Service ID' },
  resources: [
    { n: 'incident', id: 'incident_id', f: '*title|Short title; *service_id|Affected service; urgency:enum(high,low)|Urgency; body|Details', q: 'status:enum(triggered,acknowledged,resolved)|Status; urgency|Urgency', v: 'list get create update', x: { acknowledge: 'Acknowledge an {n} so escalation stops.', resolve: 'Resolve an {n}.', ['reassign']: ['Reassign an {n} to a user or escalation policy.', '*assignee|User or policy'], ['add_*_note']: ['Add a note to the timeline of an {n}.', '*note|Note text'], ['merge_*s']: ['Merge duplicate incidents into one.', '*source_incident_ids:array|Incidents to merge in'], ['snooze']: ['Snooze an {n}.', '*duration_minutes:integer|For how long'] } },
    { n: 'on call schedule', id: 'schedule_id', f: '*name|Schedule name; *time_zone|Time zone; layers:array|Rotation layers', v: 'list get create update delete', x: { ['who_is_on_call!']: ['Show who is on call now (or at a given time) for a schedule or service.', 'schedule_id|Schedule; at|Time, default now'], ['create_*_override']: ['Put someone on call in place of the scheduled person for a period.', '*user|Covering user; *start|Start; *end|End'] } },
    { n: 'escalation policy', p: 'escalation policies', id: 'policy_id', f: '*name|Name; *rules:array|Escalation rules', v: 'list get create update delete' },
    { n: 'service', id: 'service_id', f: '*name|Service name; escalation_policy_id|Policy; description|What it is', v: 'list get create update delete', x: { ['enable_*_maintenance']: ['Put a {n} in a maintenance window (no pages).', '*duration_minutes:integer|Length'] } },
    { n: 'postmortem', id: 'postmortem_id', f: '*incident_id|Incident; *summary|What happened; root_cause|Root cause; action_items:array|Follow-ups', v: 'list get create update' },
    { n: 'status page incident', id: 'status_incident_id', f: '*name|Headline; *status:enum(investigating,identified,monitoring,resolved)|Status; *message|Update for customers; components:array|Affected components', v: 'list create update' },
    { n: 'alert', id: 'alert_id', q: 'status|Status; service_id|Service', v: 'list get', x: { ['suppress']: 'Suppress an {n}.' } },
  ],
};

export const ERROR_TRACKING: FamilySpec = {
  scope: ' in a project',
  context: { project: 'Project slug' },
  resources: [
    { n: 'error group', id: 'group_id', in: ['project'], q: 'status:enum(unresolved,resolved,ignored)|Status; environment|Environment; release|Release', v: 'list get search', x: { resolve: 'Mark an {n} resolved.', ignore: ['Ignore an {n} (stop alerting on it).', 'until|Ignore until this date or count'], ['assign']: ['Assign an {n} to a person or team.', '*assignee|User or team'], ['get_*_stacktrace']: 'Latest stack trace of an {n} with source context.', ['list_*_occurrences']: 'Individual occurrences (events) of an {n}.', ['merge_*s']: ['Merge error groups that are the same bug.', '*group_ids:array|Groups'] } },
    { n: 'release', id: 'version', in: ['project'], f: '*version|Release version; commits:array|Commit SHAs; url|Release URL', v: 'list get create', x: { ['upload_source_maps']: ['Upload JavaScript source maps for a {n}.', '*path|Directory with .map files'], ['get_*_health']: 'Crash-free sessions and adoption of a {n}.' } },
    { n: 'project', id: 'project', f: '*name|Project name; *platform|Platform, e.g. javascript, python', v: 'list get create delete', x: { ['get_*_dsn']: 'Get the DSN (client key) a {n} reports with.' } },
    { n: 'alert rule', id: 'rule_id', in: ['project'], f: '*name|Name; *conditions:array|When to fire; actions:array|What to do', v: 'list create delete' },
    { n: 'performance transaction', id: 'transaction', in: ['project'], q: 'sort:enum(p95,throughput,failure_rate)|Sort', v: 'list get' },
  ],
};

export const FEATURE_FLAGS: FamilySpec = {
  scope: ' in a project',
  context: { project: 'Project key', environment: 'Environment key, e.g. production' },
  resources: [
    { n: 'feature flag', id: 'flag_key', in: ['project'], f: '*key|Flag key used in code; *name|Human-readable name; description|Purpose; variations:array|Possible values; tags:array|Tags', q: 'tag|Tag; archived:boolean|Include archived', v: 'list get create update delete search', x: { toggle: ['Turn a {n} on or off in an environment.', '*environment|Environment; *on:boolean|New state'], ['set_*_rollout']: ['Roll a {n} out to a percentage of users.', '*environment|Environment; *percentage:integer|0-100'], ['add_*_targeting_rule']: ['Serve a variation to users matching a rule.', '*environment|Environment; *attribute|User attribute; *values:array|Values; *variation|Variation to serve'], archive: 'Archive a stale {n}.', ['get_*_evaluations']: 'How often each variation of a {n} was served.' } },
    { n: 'segment', id: 'segment_key', in: ['project', 'environment'], f: '*name|Segment name; rules:array|Membership rules; included:array|User keys always in', v: 'list get create update delete' },
    { n: 'environment', id: 'environment_key', in: ['project'], f: '*name|Name; color|Colour', v: 'list get create delete', x: { ['get_*_sdk_key']: 'Get the server-side SDK key of an {n}.' } },
    { n: 'experiment', id: 'experiment_key', in: ['project'], f: '*flag_key|Flag under test; *metric|Primary metric; hypothesis|Hypothesis', v: 'list get create', x: { ['get_*_results']: 'Statistical results of an {n} per variation.', stop: 'Stop an {n}.' } },
    { n: 'audit log entry', p: 'audit log entries', v: 'list' },
  ],
};

export const CACHE_STORE: FamilySpec = {
  scope: '',
  context: { db: 'Logical database number' },
  resources: [
    { n: 'key', v: '', x: { ['get_value!']: ['Read the value stored at a key.', '*key|Key'], ['set_value!']: ['Store a value at a key, with an optional expiry.', '*key|Key; *value|Value; ttl_seconds:integer|Expiry'], ['delete_keys!']: ['Delete one or more keys.', '*keys:array|Keys'], ['scan_keys!']: ['Iterate keys matching a glob pattern without blocking the server.', '*pattern|Glob, e.g. session:*; count:integer|Hint'], ['expire_key!']: ['Set a time to live on a key.', '*key|Key; *seconds:integer|TTL'], ['get_key_ttl!']: ['Remaining time to live of a key.', '*key|Key'] } },
    { n: 'hash', v: '', x: { ['hash_get!']: ['Read fields of a hash.', '*key|Key; fields:array|Fields (all when empty)'], ['hash_set!']: ['Set fields of a hash.', '*key|Key; *fields:object|Field values'] } },
    { n: 'list', v: '', x: { ['list_push!']: ['Push values onto a list.', '*key|Key; *values:array|Values; side:enum(left,right)|End'], ['list_range!']: ['Read a range of a list.', '*key|Key; start:integer|From; stop:integer|To'] } },
    { n: 'sorted set', v: '', x: { ['sorted_set_add!']: ['Add members with scores to a sorted set.', '*key|Key; *members:object|member → score'], ['sorted_set_range!']: ['Members of a sorted set by rank or score, e.g. a leaderboard.', '*key|Key; start:integer|From; stop:integer|To; with_scores:boolean|Include scores'] } },
    { n: 'stream', v: '', x: { ['stream_add!']: ['Append an entry to a stream.', '*key|Stream; *fields:object|Entry'], ['stream_read!']: ['Read entries of a stream after an ID.', '*key|Stream; after_id|Start'] } },
    { n: 'channel', v: '', x: { ['publish_message!']: ['Publish a message on a pub/sub channel.', '*channel|Channel; *message|Message'] } },
    { n: 'server', v: '', x: { ['get_server_info!']: 'Server version, memory use, clients and keyspace statistics.', ['flush_database!']: ['Delete every key of the current database.', 'async:boolean|In the background'], ['get_slowlog!']: 'Commands that exceeded the slow log threshold.', ['get_memory_usage!']: ['Bytes used by a key and its value.', '*key|Key'] } },
  ],
};

export const STREAMING: FamilySpec = {
  scope: ' in the cluster',
  context: { cluster: 'Cluster ID' },
  resources: [
    { n: 'topic', id: 'topic', in: ['cluster'], f: '*name|Topic name; partitions:integer|Partitions; replication_factor:integer|Replicas; retention_ms:integer|Retention', v: 'list get create delete', x: { ['produce_message_to_*']: ['Produce a record to a {n}.', '*value|Record value; key|Record key; headers:object|Headers'], ['consume_messages_from_*']: ['Read records from a {n} from an offset.', 'partition:integer|Partition; offset|earliest, latest or a number; max:integer|Records'], ['update_*_config']: ['Change configuration of a {n} (retention, cleanup policy).', '*config:object|Settings'], ['add_*_partitions']: ['Increase the partitions of a {n}.', '*count:integer|New total'] } },
    { n: 'consumer group', id: 'group_id', in: ['cluster'], v: 'list get delete', x: { ['get_*_lag']: 'Lag per partition of a {n}.', ['reset_*_offsets']: ['Reset offsets of a {n} to earliest, latest or a timestamp.', '*topic|Topic; *to|earliest, latest or ISO time'] } },
    { n: 'schema', id: 'subject', f: '*subject|Subject name; *schema|Avro, JSON or Protobuf schema', v: 'list get create delete', x: { ['check_*_compatibility']: ['Check whether a new schema version is compatible with a subject.', '*schema|Candidate schema'] } },
    { n: 'connector', id: 'connector_name', in: ['cluster'], f: '*name|Name; *config:object|Connector configuration', v: 'list get create delete', x: { pause: 'Pause a {n}.', resume: 'Resume a {n}.', restart: 'Restart a failed {n}.', ['get_*_status']: 'Status of a {n} and its tasks.' } },
    { n: 'acl', id: 'acl_id', in: ['cluster'], f: '*principal|User or service account; *operation|READ, WRITE, …; *resource|Topic or group', v: 'list create delete' },
    { n: 'broker', id: 'broker_id', in: ['cluster'], v: 'list get', x: { ['get_*_config']: 'Configuration of a {n}.' } },
  ],
};

export const CDN_DNS: FamilySpec = {
  scope: ' in a zone',
  context: { zone_id: 'Zone ID' },
  resources: [
    { n: 'zone', id: 'zone_id', f: '*name|Domain name; plan|Plan', v: 'list get create delete', x: { ['purge_*_cache']: ['Purge cached files of a {n} (everything or by URL).', 'urls:array|Only these URLs'], ['get_*_analytics']: 'Requests, bandwidth and threats of a {n}.' } },
    { n: 'dns record', id: 'record_id', in: ['zone_id'], f: '*type:enum(A,AAAA,CNAME,MX,TXT,SRV)|Type; *name|Name; *content|Value; ttl:integer|TTL; proxied:boolean|Through the CDN', q: 'type|Type; name|Name', v: 'list get create update delete', x: { ['import_*s!']: ['Import DNS records from a BIND zone file.', '*zone_file|File content'] } },
    { n: 'firewall rule', id: 'rule_id', in: ['zone_id'], f: '*expression|Match expression; *action:enum(block,challenge,allow,log)|Action; description|Purpose', v: 'list get create update delete' },
    { n: 'page rule', id: 'rule_id', in: ['zone_id'], f: '*url_pattern|URL pattern; *actions:array|Settings to apply', v: 'list create update delete' },
    { n: 'certificate', id: 'certificate_id', in: ['zone_id'], f: '*hosts:array|Host names; validity_days:integer|Validity', v: 'list get create delete' },
    { n: 'worker script', id: 'script_name', f: '*name|Script name; *content|JavaScript source', v: 'list get create update delete', x: { ['get_*_logs']: 'Tail logs of an edge {n}.', ['add_*_route']: ['Route a URL pattern to a {n}.', '*pattern|Route pattern; *zone_id|Zone'] } },
    { n: 'rate limit', id: 'rate_limit_id', in: ['zone_id'], f: '*match|URL pattern; *threshold:integer|Requests; *period:integer|Seconds; *action:enum(block,challenge)|Action', v: 'list create delete' },
  ],
};

export const VAULT: FamilySpec = {
  scope: '',
  context: { mount: 'Secrets engine mount path' },
  resources: [
    { n: 'secret', id: 'path', in: ['mount'], f: '*path|Secret path; *data:object|Key-value data', v: 'list get create update delete', x: { ['get_*_versions']: 'Version history of a {n}.', ['undelete_*_version']: ['Restore a deleted version of a {n}.', '*version:integer|Version'] } },
    { n: 'policy', p: 'policies', id: 'name', f: '*name|Policy name; *rules|Policy in HCL', v: 'list get create delete' },
    { n: 'token', id: 'accessor', f: 'policies:array|Policies; ttl|Lifetime, e.g. 1h; renewable:boolean|Renewable', v: 'create', x: { renew: 'Renew a {n}.', revoke: 'Revoke a {n} and its children.', ['lookup_self!']: 'Describe the token in use.' } },
    { n: 'auth method', id: 'path', f: '*type:enum(approle,kubernetes,oidc,userpass)|Type; *path|Mount path', v: 'list create delete' },
    { n: 'database credential', v: '', x: { ['generate_database_credentials!']: ['Generate short-lived database credentials from a role.', '*role|Database role'] } },
    { n: 'transit key', id: 'key_name', f: '*name|Key name; type|Key type', v: 'list create delete', x: { ['encrypt_with_*']: ['Encrypt data with a {n} without exposing it.', '*plaintext|Base64 plaintext'], ['decrypt_with_*']: ['Decrypt ciphertext with a {n}.', '*ciphertext|Ciphertext'], rotate: 'Rotate a {n}.' } },
  ],
};
