/** Resource families of workplace tools: chat, e-mail, calendar, docs, file storage, meetings. */
import type { FamilySpec } from './spec.js';

export const CHAT: FamilySpec = {
  scope: ' in the workspace',
  context: { team_id: 'Workspace or team ID' },
  resources: [
    { n: 'channel', id: 'channel_id', f: '*name|Channel name (lower case, no spaces); private:boolean|Private channel; topic|Topic; purpose|Purpose', q: 'include_archived:boolean|Include archived channels; types|public, private or both', v: 'list get create update', x: { archive: 'Archive a {n}.', unarchive: 'Unarchive a {n}.', join: 'Join a {n} as the bot user.', leave: 'Leave a {n}.', ['invite_to_*']: ['Invite users to a {n}.', '*user_ids:array|Users to add'], ['kick_from_*']: ['Remove a user from a {n}.', '*user_id|User'], ['set_*_topic']: ['Set the topic of a {n}.', '*topic|New topic'], ['get_*_members']: 'List the members of a {n}.' } },
    { n: 'message', id: 'ts', f: '*channel_id|Channel or conversation; *text|Message text, with markdown; thread_ts|Reply in this thread; blocks:array|Rich layout blocks', q: 'channel_id|Channel; oldest|Only after this timestamp; latest|Only before', v: 'list create update delete search', x: { ['schedule_*!']: ['Schedule a message to be posted later.', '*channel_id|Channel; *text|Text; *post_at|Unix time to post at'], ['pin_*']: ['Pin a {n} to its channel.', '*channel_id|Channel'], ['get_*_permalink']: ['Get a permanent link to a {n}.', '*channel_id|Channel'], ['get_thread_replies']: ['Read every reply in the thread of a {n}.', '*channel_id|Channel'], ['send_direct_*!']: ['Send a direct message to a user.', '*user_id|Recipient; *text|Text'] } },
    { n: 'reaction', v: '', x: { ['add_*!']: ['Add an emoji reaction to a message.', '*channel_id|Channel; *ts|Message timestamp; *emoji|Emoji name without colons'], ['remove_*!']: ['Remove an emoji reaction.', '*channel_id|Channel; *ts|Message; *emoji|Emoji name'] } },
    { n: 'user', id: 'user_id', q: 'query|Name, display name or e-mail', v: 'list get search', x: { ['get_*_presence']: 'Whether a {n} is active or away.', ['lookup_*_by_email!']: ['Find a user from an e-mail address.', '*email|E-mail address'], ['set_status!']: ['Set your status text and emoji.', '*text|Status text; emoji|Emoji; expires_at|Unix time'] } },
    { n: 'file', id: 'file_id', f: '*channel_ids:array|Channels to share into; *path|Local file to upload; title|Title; initial_comment|Message', v: 'list get create delete', x: { share: ['Share an uploaded {n} into another channel.', '*channel_id|Channel'] } },
    { n: 'reminder', id: 'reminder_id', f: '*text|What to remind; *time|When, e.g. "in 20 minutes" or a Unix time; user_id|Who to remind', v: 'list get create delete', x: { complete: 'Mark a {n} complete.' } },
    { n: 'user group', id: 'usergroup_id', f: '*name|Group name; *handle|Mention handle; users:array|Members', v: 'list create update', x: { disable: 'Disable a {n}.' } },
    { n: 'bookmark', id: 'bookmark_id', f: '*channel_id|Channel; *title|Title; *link|URL', v: 'list create delete' },
    { n: 'emoji', p: 'emoji', v: 'list', x: { ['add_custom_emoji!']: ['Upload a custom emoji.', '*name|Emoji name; *image_url|Image'] } },
    { n: 'conversation', id: 'conversation_id', v: '', x: { ['open_group_dm!']: ['Open a group direct message with several users.', '*user_ids:array|Participants'], ['mark_read']: ['Mark a {n} read up to a message.', '*ts|Message timestamp'], ['get_history']: ['Read the message history of a {n}.', 'limit:integer|Messages; oldest|From'] } },
    { n: 'workflow', id: 'workflow_id', v: 'list', x: { trigger: ['Start a {n} with inputs.', 'inputs:object|Inputs'] } },
  ],
};

export const EMAIL: FamilySpec = {
  scope: ' in the mailbox',
  context: { mailbox: 'Mailbox address (default: the signed-in user)' },
  resources: [
    { n: 'email', id: 'message_id', q: 'folder|Folder or label; unread:boolean|Unread only; from|Sender; after|Received after', v: 'list get delete search', x: { ['send_*!']: ['Send an e-mail.', '*to:array|Recipients; *subject|Subject; *body|Body (HTML or text); cc:array|Cc; bcc:array|Bcc; attachments:array|Paths of files to attach'], reply: ['Reply to an {n}.', '*body|Reply text; reply_all:boolean|Reply to all recipients'], forward: ['Forward an {n}.', '*to:array|Recipients; comment|Text above the forwarded mail'], ['move']: ['Move an {n} to a folder.', '*folder|Destination folder'], ['mark_*_read']: 'Mark an {n} as read.', ['mark_*_unread']: 'Mark an {n} as unread.', ['flag']: 'Flag or star an {n}.', ['get_*_attachment']: ['Download an attachment of an {n}.', '*attachment_id|Attachment'] } },
    { n: 'draft', id: 'draft_id', f: '*to:array|Recipients; *subject|Subject; *body|Body; cc:array|Cc', v: 'list get create update delete', x: { send: 'Send a saved {n}.' } },
    { n: 'folder', id: 'folder_id', f: '*name|Folder name; parent_id|Parent folder', v: 'list create update delete', x: { empty: 'Delete everything in a {n} (e.g. Trash or Junk).' } },
    { n: 'label', id: 'label_id', f: '*name|Label name; color|Colour', v: 'list create delete', x: { ['apply_*']: ['Apply a {n} to messages.', '*message_ids:array|Messages'] } },
    { n: 'mail rule', id: 'rule_id', f: '*name|Rule name; *conditions:object|Sender, subject or keyword conditions; *actions:object|Move, label, forward or delete', v: 'list create update delete' },
    { n: 'contact', id: 'contact_id', f: '*name|Full name; email|E-mail; phone|Phone; company|Company', q: 'query|Name or e-mail', v: 'list get create update delete search' },
    { n: 'auto reply', v: '', x: { ['set_out_of_office!']: ['Turn on an out-of-office automatic reply.', '*message|Reply text; *start|Start; *end|End; external:boolean|Also reply to external senders'], ['disable_out_of_office!']: 'Turn the out-of-office reply off.' } },
    { n: 'thread', id: 'thread_id', v: 'get', x: { ['archive']: 'Archive a whole e-mail {n}.', ['summarize']: 'Summarise the messages of a {n}.' } },
  ],
};

export const CALENDAR: FamilySpec = {
  scope: ' in a calendar',
  context: { calendar_id: 'Calendar ID ("primary" for the user\'s own)' },
  resources: [
    { n: 'event', id: 'event_id', in: ['calendar_id'], f: '*summary|Event title; *start|Start time (RFC 3339); *end|End time; attendees:array|E-mail addresses to invite; location|Where; description|Agenda; recurrence|RRULE for repeating events; add_video_link:boolean|Attach a video meeting link', q: 'time_min|From; time_max|To; query|Text to look for', v: 'list get create update delete search', x: { ['respond_to_*']: ['Accept, decline or tentatively accept an {n} invitation.', '*response:enum(accepted,declined,tentative)|Answer; comment|Note to the organiser'], ['move_*']: ['Move an {n} to another calendar.', '*destination_calendar_id|Calendar'], ['quick_add_*!']: ['Create an event from a sentence like "Lunch with Ana tomorrow at 1pm".', '*text|Sentence'], ['list_*_instances']: 'List the occurrences of a recurring {n}.' } },
    { n: 'calendar', id: 'calendar_id', f: '*summary|Calendar name; time_zone|Time zone; description|Description', v: 'list get create update delete', x: { share: ['Share a {n} with someone.', '*email|Person; *role:enum(reader,writer,owner)|Access'], ['clear']: 'Delete all events of a {n}.' } },
    { n: 'free busy', v: '', x: { ['query_free_busy!']: ['Check when people are busy or free in a time range.', '*emails:array|People; *time_min|From; *time_max|To'], ['find_meeting_times!']: ['Suggest times when all attendees are free for a meeting of a given length.', '*attendees:array|People; *duration_minutes:integer|Length; window_start|Earliest; window_end|Latest'] } },
    { n: 'room', id: 'room_id', q: 'building|Building; capacity:integer|Minimum seats', v: 'list get', x: { ['book']: ['Book a meeting {n} for a time slot.', '*start|Start; *end|End; *summary|What for'] } },
    { n: 'working hours', p: 'working hours', v: '', x: { ['get_working_hours!']: ['Working hours and time zone of a person.', '*email|Person'], ['set_working_hours!']: ['Set your working hours.', '*days:array|Days; *start|Start time; *end|End time'] } },
    { n: 'reminder setting', v: '', x: { ['set_default_reminders!']: ['Set default event reminders of a calendar.', '*calendar_id|Calendar; *minutes_before:array|Offsets'] } },
  ],
};

export const DOCS_WIKI: FamilySpec = {
  scope: ' in a space',
  context: { space: 'Space key or ID' },
  resources: [
    { n: 'page', id: 'page_id', in: ['space'], f: '*title|Page title; *body|Content in Markdown; parent_id|Parent page; labels:array|Labels', q: 'title|Title contains; label|Label', v: 'list get create update delete search', x: { move: ['Move a {n} under another parent or into another space.', '*target_parent_id|New parent'], ['get_*_children']: 'List the child pages of a {n}.', ['get_*_history']: 'Version history of a {n} with authors.', ['restore_*_version']: ['Restore an earlier version of a {n}.', '*version:integer|Version'], ['export_*_as_pdf']: 'Export a {n} as a PDF file.', ['copy']: ['Duplicate a {n}.', 'include_children:boolean|Copy child pages too'] } },
    { n: 'space', id: 'space_key', f: '*name|Space name; *key|Space key; description|Description', v: 'list get create delete', x: { archive: 'Archive a {n}.', ['get_*_permissions']: 'Who can view or edit a {n}.' } },
    { n: 'page comment', id: 'comment_id', f: '*page_id|Page; *body|Comment text; inline_selection|Text the inline comment is anchored to', v: 'list create delete', x: { resolve: 'Resolve an inline {n}.' } },
    { n: 'attachment', id: 'attachment_id', f: '*page_id|Page; *file_path|File to upload', v: 'list create delete' },
    { n: 'template', id: 'template_id', in: ['space'], f: '*name|Template name; *body|Template content', v: 'list get create delete', x: { ['create_page_from_*']: ['Create a new page from a {n}.', '*title|Title'] } },
    { n: 'blog post', id: 'post_id', in: ['space'], f: '*title|Title; *body|Content', v: 'list get create update delete' },
    { n: 'label', id: 'label', v: '', x: { ['add_labels_to_page!']: ['Add labels to a page.', '*page_id|Page; *labels:array|Labels'], ['find_pages_by_label!']: ['Pages that carry a label.', '*label|Label'] } },
    { n: 'database', id: 'database_id', f: '*title|Title; *properties:object|Column definitions', v: 'get create', x: { ['query']: ['Query the rows of a {n} with filters and sorts.', 'filter:object|Filter; sorts:array|Sort order'], ['add_row_to_*']: ['Add a row to a {n}.', '*properties:object|Cell values'] } },
  ],
};

export const FILE_STORAGE: FamilySpec = {
  scope: '',
  context: { drive_id: 'Drive ID (default: My Drive)' },
  resources: [
    { n: 'file', id: 'file_id', f: '*name|File name; *parent_folder_id|Folder to put it in; *local_path|Local file to upload; mime_type|MIME type', q: 'folder_id|Folder; mime_type|Type filter; modified_after|Modified since', v: 'list get create delete search', x: { ['download']: ['Download a {n} to a local path.', '*destination|Local path'], ['rename']: ['Rename a {n}.', '*new_name|New name'], ['move']: ['Move a {n} to another folder.', '*folder_id|Destination'], ['copy']: 'Make a copy of a {n}.', ['share']: ['Share a {n} with people or make it link-accessible.', 'emails:array|People; *role:enum(viewer,commenter,editor)|Access; anyone_with_link:boolean|Anyone with the link'], ['list_*_revisions']: 'Revisions of a {n}.', ['export']: ['Export a document {n} to another format (PDF, DOCX, CSV).', '*format|Target format'], ['restore_from_trash']: 'Restore a trashed {n}.' } },
    { n: 'folder', id: 'folder_id', f: '*name|Folder name; parent_id|Parent folder', v: 'list create delete', x: { ['get_*_size']: 'Total size of a {n} and its contents.' } },
    { n: 'permission', id: 'permission_id', f: '*file_id|File or folder; *email|Person or group; *role:enum(viewer,commenter,editor,owner)|Role', v: 'list create update delete', x: { ['transfer_ownership!']: ['Transfer ownership of a file to someone else.', '*file_id|File; *new_owner|E-mail'] } },
    { n: 'shared drive', id: 'drive_id', f: '*name|Drive name', v: 'list get create delete' },
    { n: 'storage quota', v: '', x: { ['get_storage_quota!']: 'Used and remaining storage of the account.', ['list_largest_files!']: ['Files using the most storage.', 'limit:integer|Files'] } },
    { n: 'trash', v: '', x: { ['empty_trash!']: 'Permanently delete everything in the trash.' } },
    { n: 'comment', id: 'comment_id', f: '*file_id|File; *content|Comment', v: 'list create delete' },
  ],
};

export const MEETINGS: FamilySpec = {
  scope: '',
  context: { user_id: 'User ID or "me"' },
  resources: [
    { n: 'meeting', id: 'meeting_id', in: ['user_id'], f: '*topic|Meeting topic; *start_time|Start; duration_minutes:integer|Length; password|Passcode; waiting_room:boolean|Enable waiting room; invitees:array|E-mail addresses', q: 'type:enum(scheduled,live,upcoming,previous)|Which meetings', v: 'list get create update delete', x: { end: 'End a live {n} for everyone.', ['get_*_invitation']: 'Get the invitation text and join link of a {n}.', ['list_*_participants']: 'Who attended a past {n} and for how long.' } },
    { n: 'recording', id: 'recording_id', in: ['user_id'], q: 'from|From date; to|To date', v: 'list get delete', x: { ['get_*_transcript']: 'Download the transcript of a meeting {n}.', ['share']: 'Get a share link for a {n}.' } },
    { n: 'webinar', id: 'webinar_id', in: ['user_id'], f: '*topic|Topic; *start_time|Start; duration_minutes:integer|Length; panelists:array|Panelists', v: 'list get create update delete', x: { ['list_*_registrants']: 'People registered for a {n}.', ['add_*_registrant']: ['Register someone for a {n}.', '*email|E-mail; *first_name|First name'] } },
    { n: 'meeting summary', p: 'meeting summaries', id: 'meeting_id', v: 'get', x: { ['list_action_items']: 'Action items extracted from a {n}.' } },
    { n: 'phone call log', id: 'call_id', q: 'from|From date', v: 'list get' },
  ],
};
