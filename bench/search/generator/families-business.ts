/** Resource families of business systems: CRM, helpdesk, HR, payments, commerce, accounting, marketing, analytics, CMS. */
import type { FamilySpec } from './spec.js';

export const CRM: FamilySpec = {
  scope: ' in the CRM',
  context: {},
  resources: [
    { n: 'contact', id: 'contact_id', f: '*email|E-mail; first_name|First name; last_name|Last name; phone|Phone; company_id|Company; lifecycle_stage:enum(lead,opportunity,customer)|Stage', q: 'owner_id|Owner; lifecycle_stage|Stage', v: 'list get create update delete search', x: { merge: ['Merge two duplicate {n} records.', '*duplicate_id|Record merged into this one'], ['get_*_timeline']: 'Emails, calls, meetings and notes logged on a {n}.' } },
    { n: 'company', p: 'companies', id: 'company_id', f: '*name|Company name; domain|Website domain; industry|Industry; employees:integer|Head count', v: 'list get create update delete search', x: { ['list_*_contacts']: 'People who work at a {n}.' } },
    { n: 'deal', id: 'deal_id', f: '*name|Deal name; *amount:number|Value; *pipeline|Sales pipeline; stage|Pipeline stage; close_date|Expected close; owner_id|Owner', q: 'pipeline|Pipeline; stage|Stage; owner_id|Owner', v: 'list get create update delete search', x: { ['move_*_stage']: ['Move a {n} to another pipeline stage.', '*stage|Stage'], ['mark_*_won']: 'Mark a {n} closed won.', ['mark_*_lost']: ['Mark a {n} closed lost with a reason.', 'reason|Why it was lost'] } },
    { n: 'note', id: 'note_id', f: '*body|Note text; *record_id|Contact, company or deal it belongs to', v: 'list create update delete' },
    { n: 'task', id: 'task_id', f: '*subject|What to do; *due_date|Due date; assignee_id|Owner; record_id|Related record', q: 'status:enum(open,completed)|Status', v: 'list get create update delete', x: { complete: 'Mark a {n} done.' } },
    { n: 'call', id: 'call_id', f: '*record_id|Who was called; *duration_seconds:integer|Length; outcome|Outcome; notes|Notes', v: 'list create' },
    { n: 'pipeline', id: 'pipeline_id', f: '*name|Pipeline name; stages:array|Stages in order', v: 'list get create update', x: { ['get_*_forecast']: 'Weighted revenue forecast of a {n} by month.' } },
    { n: 'owner', id: 'owner_id', v: 'list get' },
    { n: 'email sequence', id: 'sequence_id', v: 'list get', x: { ['enroll_contact_in_*']: ['Enroll a contact in an automated {n}.', '*contact_id|Contact'] } },
    { n: 'quote', id: 'quote_id', f: '*deal_id|Deal; *line_items:array|Products and quantities; expiration_date|Valid until', v: 'list get create', x: { send: 'Send a {n} to the customer for signature.' } },
  ],
};

export const HELPDESK: FamilySpec = {
  scope: '',
  context: {},
  resources: [
    { n: 'ticket', id: 'ticket_id', f: '*subject|Subject; *description|First message; requester_email|Customer e-mail; priority:enum(low,normal,high,urgent)|Priority; tags:array|Tags; group_id|Team', q: 'status:enum(new,open,pending,solved,closed)|Status; assignee_id|Agent; tag|Tag', v: 'list get create update delete search', x: { ['reply_to_*']: ['Post a public reply to the customer on a {n}.', '*body|Reply text'], ['add_internal_note']: ['Add a private note to a {n}, visible to agents only.', '*body|Note'], ['merge_*s']: ['Merge tickets about the same problem.', '*source_ids:array|Tickets to merge'], ['escalate']: ['Escalate a {n} to another group.', '*group_id|Group'], ['get_*_satisfaction']: 'Satisfaction rating a customer left on a {n}.' } },
    { n: 'macro', id: 'macro_id', f: '*title|Macro title; *actions:array|Field changes and reply text', v: 'list get create delete', x: { ['apply_*']: ['Apply a {n} to a ticket.', '*ticket_id|Ticket'] } },
    { n: 'help center article', id: 'article_id', f: '*title|Title; *body|HTML body; section_id|Section; draft:boolean|Unpublished', v: 'list get create update delete search' },
    { n: 'customer', id: 'customer_id', f: '*email|E-mail; name|Name; organization_id|Organisation', v: 'list get create update search', x: { ['list_*_tickets']: 'Tickets requested by a {n}.' } },
    { n: 'sla policy', p: 'sla policies', id: 'policy_id', f: '*title|Name; *first_reply_minutes:integer|First reply target; *resolution_minutes:integer|Resolution target', v: 'list get create update' },
    { n: 'view', id: 'view_id', v: 'list get', x: { ['count_tickets_in_*']: 'Number of tickets in a {n}.' } },
    { n: 'live chat', id: 'chat_id', v: 'list get', x: { transfer: ['Transfer a {n} to another agent.', '*agent_id|Agent'] } },
  ],
};

export const HR: FamilySpec = {
  scope: '',
  context: {},
  resources: [
    { n: 'employee', id: 'employee_id', f: '*first_name|First name; *last_name|Last name; *work_email|Work e-mail; department|Department; manager_id|Manager; start_date|Start date; job_title|Title', q: 'department|Department; status:enum(active,inactive)|Status', v: 'list get create update search', x: { terminate: ['Record the departure of an {n}.', '*last_day|Last working day; reason|Reason'], ['get_*_org_chart']: 'Reporting line and direct reports of an {n}.' } },
    { n: 'time off request', id: 'request_id', f: '*employee_id|Employee; *policy|Leave type, e.g. vacation, sick; *start_date|First day; *end_date|Last day; note|Note', q: 'status:enum(pending,approved,denied)|Status', v: 'list get create', x: { approve: 'Approve a {n}.', deny: ['Deny a {n}.', 'reason|Why'], ['get_time_off_balance!']: ['Remaining vacation and leave balance of an employee.', '*employee_id|Employee'], ['who_is_out!']: ['Who is out of office on a date range.', '*start|From; *end|To'] } },
    { n: 'job opening', id: 'job_id', f: '*title|Job title; *department|Department; location|Location; description|Job description; remote:boolean|Remote allowed', v: 'list get create update', x: { close: 'Close a {n}.' } },
    { n: 'candidate', id: 'candidate_id', f: '*name|Name; *email|E-mail; *job_id|Applied job; resume_path|CV file', q: 'job_id|Job; stage|Hiring stage', v: 'list get create update search', x: { ['advance']: ['Move a {n} to the next interview stage.', 'stage|Target stage'], reject: ['Reject a {n}.', 'reason|Reason'], ['schedule_interview']: ['Schedule an interview with a {n}.', '*interviewers:array|Interviewers; *start|Start'] } },
    { n: 'payroll run', id: 'run_id', v: 'list get', x: { ['preview_*!']: 'Preview the next payroll with gross and net pay per employee.' } },
    { n: 'review cycle', id: 'cycle_id', f: '*name|Name; *due_date|Due date', v: 'list get create' },
    { n: 'department', id: 'department_id', f: '*name|Department name; head_id|Department head', v: 'list create' },
  ],
};

export const PAYMENTS: FamilySpec = {
  scope: '',
  context: {},
  resources: [
    { n: 'payment', id: 'payment_id', f: '*amount:integer|Amount in the smallest currency unit; *currency|Three-letter ISO code; *customer_id|Customer; payment_method_id|Card or bank account; description|Statement description', q: 'status:enum(succeeded,pending,failed)|Status; customer_id|Customer; created_after|Since', v: 'list get create', x: { capture: 'Capture an authorised {n}.', cancel: 'Cancel a {n} that has not been captured.', ['refund']: ['Refund a {n}, fully or partly.', 'amount:integer|Amount to refund (default: all); reason:enum(duplicate,fraudulent,requested_by_customer)|Reason'] } },
    { n: 'customer', id: 'customer_id', f: '*email|E-mail; name|Name; address:object|Billing address; metadata:object|Your own key-value data', v: 'list get create update delete search', x: { ['list_*_payment_methods']: 'Saved cards and bank accounts of a {n}.' } },
    { n: 'subscription', id: 'subscription_id', f: '*customer_id|Customer; *price_id|Price; quantity:integer|Seats; trial_days:integer|Trial length', q: 'status:enum(active,past_due,canceled,trialing)|Status', v: 'list get create update', x: { cancel: ['Cancel a {n} now or at period end.', 'at_period_end:boolean|Wait until the paid period ends'], pause: 'Pause collection on a {n}.', resume: 'Resume a paused {n}.' } },
    { n: 'invoice', id: 'invoice_id', f: '*customer_id|Customer; *line_items:array|Items; due_date|Due date', q: 'status:enum(draft,open,paid,void,uncollectible)|Status', v: 'list get create', x: { finalize: 'Finalise a draft {n} so it can be paid.', send: 'E-mail an {n} to the customer.', void: 'Void an {n}.', ['get_*_pdf']: 'Download the PDF of an {n}.' } },
    { n: 'price', id: 'price_id', f: '*product_id|Product; *unit_amount:integer|Amount; *currency|Currency; recurring_interval:enum(day,week,month,year)|Billing interval', v: 'list get create update' },
    { n: 'product', id: 'product_id', f: '*name|Product name; description|Description; active:boolean|Available', v: 'list get create update delete' },
    { n: 'payout', id: 'payout_id', q: 'status|Status', v: 'list get', x: { ['get_balance!']: 'Available and pending balance of the account.' } },
    { n: 'dispute', id: 'dispute_id', q: 'status|Status', v: 'list get', x: { ['submit_*_evidence']: ['Submit evidence to contest a chargeback {n}.', '*evidence:object|Receipts, shipping proof, correspondence'], ['accept']: 'Accept a {n} (the customer keeps the money).' } },
    { n: 'coupon', id: 'coupon_id', f: '*percent_off:number|Percentage discount; duration:enum(once,repeating,forever)|How long it applies; max_redemptions:integer|Limit', v: 'list get create delete' },
    { n: 'payment link', id: 'link_id', f: '*price_id|Price; quantity:integer|Quantity', v: 'list get create', x: { deactivate: 'Deactivate a {n}.' } },
    { n: 'checkout session', id: 'session_id', f: '*price_id|Price; *success_url|Redirect after payment; mode:enum(payment,subscription)|Mode', v: 'get create', x: { expire: 'Expire an open {n}.' } },
  ],
};

export const ECOMMERCE: FamilySpec = {
  scope: ' in the store',
  context: {},
  resources: [
    { n: 'product', id: 'product_id', f: '*title|Product title; description|HTML description; vendor|Vendor; product_type|Type; tags:array|Tags; status:enum(active,draft,archived)|Status', q: 'collection_id|Collection; vendor|Vendor', v: 'list get create update delete search', x: { ['list_*_variants']: 'Variants (size, colour) of a {n} with price and SKU.', ['add_*_image']: ['Add an image to a {n}.', '*image_url|Image URL; alt|Alt text'] } },
    { n: 'order', id: 'order_id', q: 'status:enum(open,closed,cancelled,any)|Status; financial_status|paid, pending, refunded; created_at_min|Since', v: 'list get update', x: { cancel: ['Cancel an {n} and optionally restock.', 'reason|Reason; restock:boolean|Return items to stock'], ['fulfill']: ['Mark items of an {n} as shipped with tracking.', 'tracking_number|Tracking number; carrier|Carrier'], ['refund']: ['Refund an {n} or some of its items.', 'line_items:array|Items; amount:number|Amount'], ['add_*_note']: ['Add a note to an {n}.', '*note|Note'] } },
    { n: 'inventory level', id: 'inventory_item_id', v: 'list', x: { ['adjust_inventory!']: ['Change the available stock of an item at a location.', '*inventory_item_id|Item; *location_id|Warehouse; *delta:integer|Change'], ['list_low_stock_items!']: ['Items below a stock threshold.', 'threshold:integer|Units'] } },
    { n: 'customer', id: 'customer_id', f: '*email|E-mail; first_name|First name; last_name|Last name; accepts_marketing:boolean|Marketing consent', v: 'list get create update search', x: { ['list_*_orders']: 'Orders placed by a {n}.' } },
    { n: 'collection', id: 'collection_id', f: '*title|Collection title; rules:array|Automatic membership rules', v: 'list get create update delete', x: { ['add_product_to_*']: ['Add a product to a {n}.', '*product_id|Product'] } },
    { n: 'discount code', id: 'code_id', f: '*code|Code customers type; *value:number|Amount or percentage; type:enum(percentage,fixed_amount,free_shipping)|Kind; ends_at|Expiry', v: 'list get create delete' },
    { n: 'abandoned checkout', id: 'checkout_id', v: 'list get', x: { ['send_recovery_email']: 'E-mail the customer a link to finish an {n}.' } },
    { n: 'shipping zone', id: 'zone_id', f: '*name|Zone name; *countries:array|Countries; rates:array|Rates', v: 'list create update' },
    { n: 'gift card', id: 'gift_card_id', f: '*initial_value:number|Value; note|Note', v: 'list get create', x: { disable: 'Disable a {n}.' } },
    { n: 'sales report', v: '', x: { ['get_sales_report!']: ['Sales, orders and average order value over a period.', '*from|Start date; *to|End date; group_by:enum(day,week,month,product)|Grouping'] } },
  ],
};

export const ACCOUNTING: FamilySpec = {
  scope: '',
  context: { tenant_id: 'Organisation (tenant) ID' },
  resources: [
    { n: 'invoice', id: 'invoice_id', in: ['tenant_id'], f: '*contact_id|Customer; *line_items:array|Lines with account codes; *due_date|Due; reference|Reference', q: 'status:enum(draft,submitted,authorised,paid,voided)|Status; contact_id|Customer', v: 'list get create update', x: { ['email']: 'Email an {n} to the customer.', ['record_*_payment']: ['Record a payment received against an {n}.', '*amount:number|Amount; *date|Date; *account_code|Bank account'], void: 'Void an {n}.' } },
    { n: 'bill', id: 'bill_id', in: ['tenant_id'], f: '*supplier_id|Supplier; *line_items:array|Lines; *due_date|Due', v: 'list get create update', x: { ['pay']: ['Record payment of a supplier {n}.', '*amount:number|Amount; *date|Date'] } },
    { n: 'expense claim', id: 'claim_id', in: ['tenant_id'], f: '*employee_id|Who spent it; *amount:number|Amount; *category|Category; receipt_path|Receipt image; description|What for', v: 'list get create', x: { approve: 'Approve an {n} for reimbursement.' } },
    { n: 'account', id: 'account_code', in: ['tenant_id'], f: '*code|Account code; *name|Name; *type:enum(asset,liability,equity,revenue,expense)|Type', v: 'list get create' },
    { n: 'journal entry', p: 'journal entries', id: 'journal_id', in: ['tenant_id'], f: '*date|Date; *lines:array|Debit and credit lines; narration|Description', v: 'list get create' },
    { n: 'bank transaction', id: 'transaction_id', in: ['tenant_id'], q: 'account_code|Bank account; unreconciled:boolean|Only unreconciled', v: 'list get', x: { reconcile: ['Reconcile a {n} against an invoice or bill.', '*match_id|Invoice, bill or payment'] } },
    { n: 'report', id: 'report', in: ['tenant_id'], v: '', x: { ['get_profit_and_loss!']: ['Profit and loss statement for a period.', '*from|Start; *to|End'], ['get_balance_sheet!']: ['Balance sheet at a date.', '*date|Date'], ['get_aged_receivables!']: 'Outstanding customer invoices grouped by age.', ['get_cash_flow!']: ['Cash flow statement for a period.', '*from|Start; *to|End'] } },
    { n: 'tax rate', id: 'tax_type', in: ['tenant_id'], v: 'list get' },
    { n: 'supplier', id: 'supplier_id', in: ['tenant_id'], f: '*name|Supplier name; email|E-mail; tax_number|VAT number', v: 'list get create update' },
  ],
};

export const MARKETING: FamilySpec = {
  scope: '',
  context: { list_id: 'Audience (list) ID' },
  resources: [
    { n: 'campaign', id: 'campaign_id', f: '*subject|Subject line; *list_id|Audience; *from_name|Sender name; content_html|Body; segment_id|Only this segment', q: 'status:enum(draft,scheduled,sent)|Status', v: 'list get create update delete', x: { send: 'Send an email {n} now.', schedule: ['Schedule a {n}.', '*send_at|When'], ['send_test_*']: ['Send a test of a {n} to some addresses.', '*emails:array|Recipients'], ['get_*_report']: 'Opens, clicks, bounces and unsubscribes of a sent {n}.' } },
    { n: 'subscriber', id: 'email', in: ['list_id'], f: '*email|E-mail; status:enum(subscribed,unsubscribed,pending)|Status; merge_fields:object|Name and custom fields; tags:array|Tags', v: 'list get create update delete search', x: { unsubscribe: 'Unsubscribe a {n} from the audience.', ['get_*_activity']: 'Opens and clicks of a {n}.' } },
    { n: 'audience', id: 'list_id', f: '*name|Audience name; *from_email|Default sender', v: 'list get create delete', x: { ['get_*_growth']: 'Subscriber growth of an {n} by month.' } },
    { n: 'segment', id: 'segment_id', in: ['list_id'], f: '*name|Segment name; *conditions:array|Who is in it', v: 'list get create delete' },
    { n: 'automation', id: 'workflow_id', v: 'list get', x: { start: 'Start an {n}.', pause: 'Pause an {n}.', ['add_subscriber_to_*']: ['Add someone to an {n} queue.', '*email|E-mail'] } },
    { n: 'email template', id: 'template_id', f: '*name|Template name; *html|HTML', v: 'list get create update delete' },
    { n: 'landing page', id: 'page_id', f: '*title|Title; *list_id|Audience signups go to', v: 'list get create', x: { publish: 'Publish a {n}.' } },
  ],
};

export const ANALYTICS: FamilySpec = {
  scope: '',
  context: { project_id: 'Analytics project ID' },
  resources: [
    { n: 'event', v: '', x: { ['track_event!']: ['Record an analytics event for a user.', '*event|Event name; *distinct_id|User; properties:object|Event properties'], ['query_event_counts!']: ['Count events over time, optionally broken down by a property.', '*event|Event name; *from|From; *to|To; breakdown|Property'], ['list_event_names!']: 'Event names tracked in the project.' } },
    { n: 'funnel', id: 'funnel_id', in: ['project_id'], f: '*name|Funnel name; *steps:array|Events in order', v: 'list get create', x: { ['get_*_conversion']: ['Conversion between the steps of a {n}.', '*from|From; *to|To'] } },
    { n: 'retention report', v: '', x: { ['get_retention!']: ['Cohort retention: how many users come back after their first event.', '*born_event|First event; *return_event|Return event; *from|From'] } },
    { n: 'cohort', id: 'cohort_id', in: ['project_id'], f: '*name|Name; *filters:array|Who belongs', v: 'list get create delete' },
    { n: 'user profile', id: 'distinct_id', in: ['project_id'], f: '*properties:object|Properties to set', v: 'get update delete search', x: { ['get_*_activity']: 'Event stream of one user.' } },
    { n: 'annotation', id: 'annotation_id', in: ['project_id'], f: '*date|Date; *description|What happened', v: 'list create delete' },
    { n: 'report', id: 'report_id', in: ['project_id'], f: '*name|Name; *query:object|Saved query', v: 'list get create delete', x: { ['export_*_csv']: 'Export a {n} as CSV.' } },
    { n: 'web analytics', v: '', x: { ['get_top_pages!']: ['Most viewed pages with views and bounce rate.', '*from|From; *to|To'], ['get_traffic_sources!']: ['Visits by referrer, campaign and channel.', '*from|From; *to|To'], ['get_realtime_visitors!']: 'Visitors on the site right now.' } },
  ],
};

export const CMS: FamilySpec = {
  scope: ' in the content space',
  context: { space_id: 'Space ID', environment: 'Environment (default: master)' },
  resources: [
    { n: 'entry', p: 'entries', id: 'entry_id', in: ['space_id', 'environment'], f: '*content_type|Content type ID; *fields:object|Field values per locale', q: 'content_type|Content type; query|Full-text', v: 'list get create update delete search', x: { publish: 'Publish an {n} so it appears on the live site.', unpublish: 'Unpublish an {n}.', archive: 'Archive an {n}.', ['list_*_versions']: 'Version history of an {n}.' } },
    { n: 'asset', id: 'asset_id', in: ['space_id', 'environment'], f: '*title|Title; *file_url|URL of the file to import; description|Alt text', v: 'list get create delete', x: { publish: 'Publish an {n}.', ['process']: 'Process an uploaded {n} (thumbnails, metadata).' } },
    { n: 'content type', id: 'content_type_id', in: ['space_id', 'environment'], f: '*name|Name; *fields:array|Field definitions; display_field|Title field', v: 'list get create update delete', x: { activate: 'Activate a {n}.' } },
    { n: 'locale', id: 'locale_code', in: ['space_id', 'environment'], f: '*code|Locale code, e.g. de-DE; fallback_code|Fallback locale', v: 'list create delete' },
    { n: 'webhook', id: 'webhook_id', in: ['space_id'], f: '*url|Target URL; topics:array|Events', v: 'list create delete' },
    { n: 'scheduled action', id: 'action_id', in: ['space_id'], f: '*entry_id|Entry; *action:enum(publish,unpublish)|Action; *scheduled_for|When', v: 'list create delete' },
    { n: 'environment', id: 'environment_id', in: ['space_id'], f: '*name|Name; source_environment|Clone from', v: 'list create delete' },
  ],
};

export const DATA_WAREHOUSE: FamilySpec = {
  scope: '',
  context: { warehouse: 'Compute warehouse', database: 'Database' },
  resources: [
    { n: 'query', p: 'queries', id: 'query_id', v: '', x: { ['run_sql!']: ['Run a SQL query on the warehouse and return the result set.', '*sql|SQL; warehouse|Warehouse; timeout_s:integer|Timeout'], ['get_query_status']: 'Status and progress of a running {n}.', ['cancel_query']: 'Cancel a running {n}.', ['get_query_history!']: ['Recent queries with duration, bytes scanned and user.', 'user|User; min_duration_s:integer|Slow only'] } },
    { n: 'dataset', id: 'dataset_id', f: '*name|Dataset name; location|Location; description|Description', v: 'list get create delete' },
    { n: 'table', id: 'table_id', in: ['database'], f: '*name|Table name; *schema:array|Columns; partition_by|Partition column', v: 'list get create delete', x: { ['get_*_schema']: 'Columns and types of a {n}.', ['preview_*_rows']: ['First rows of a {n}.', 'limit:integer|Rows'], ['load_data_into_*']: ['Load CSV or Parquet files from a bucket into a {n}.', '*source_uri|gs:// or s3:// URI; format:enum(csv,parquet,json)|Format'], ['export_*']: ['Export a {n} to a bucket.', '*destination_uri|Destination'] } },
    { n: 'warehouse', id: 'warehouse', f: '*name|Warehouse name; *size:enum(xsmall,small,medium,large)|Size; auto_suspend_s:integer|Idle suspend', v: 'list create', x: { resume: 'Resume a suspended {n}.', suspend: 'Suspend a {n}.', resize: ['Resize a {n}.', '*size|Size'] } },
    { n: 'scheduled query', p: 'scheduled queries', id: 'schedule_id', f: '*name|Name; *sql|Query; *cron|Schedule; destination_table|Write results here', v: 'list create delete' },
    { n: 'usage', v: '', x: { ['get_credit_usage!']: ['Compute credits used per warehouse and day.', '*from|From; *to|To'], ['get_storage_usage!']: 'Bytes stored per database.' } },
    { n: 'stage', id: 'stage_name', f: '*name|Stage name; *url|Bucket URL', v: 'list create delete', x: { ['list_*_files']: 'Files in an external {n}.' } },
    { n: 'grant', v: '', x: { ['grant_role!']: ['Grant a role to a user.', '*role|Role; *user|User'], ['show_grants!']: ['Privileges held by a role or user.', '*principal|Role or user'] } },
  ],
};
