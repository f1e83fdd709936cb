import type { TasksResources } from '#app/locales/zh/tasks.ts';

const tasks: TasksResources = {
  title: 'Async tasks',
  empty: 'No tasks',
  filters: {
    label: 'Filter tasks',
    channel: 'Channel ID',
    taskId: 'Task ID',
    start: 'Start time ({{zone}})',
    end: 'End time ({{zone}})',
    pageSize: 'Rows per page',
    submit: 'Search',
    reset: 'Reset',
  },
  columns: {
    submitTime: 'Submit time',
    finishTime: 'End time',
    progress: 'Progress',
    duration: 'Duration',
    channel: 'Channel',
    platform: 'Platform',
    action: 'Action',
    taskId: 'Task ID',
    status: 'Status',
    failReason: 'Fail reason',
  },
  duration: '{{seconds}} s',
  platform: { suno: 'Suno', unknown: 'Unknown' },
  action: { MUSIC: 'Generate music', LYRICS: 'Generate lyrics', unknown: 'Unknown' },
  status: {
    success: 'Success',
    notStart: 'Not started',
    submitted: 'In queue',
    inProgress: 'In progress',
    failure: 'Failed',
    queued: 'Queued',
    unknown: 'Unknown',
    submitting: 'Submitting',
  },
  record: {
    title: 'Task record',
    show: 'Show the full record of task {{id}}',
    close: 'Close',
  },
  errors: {
    invalidInput: 'Invalid input',
    unauthorized: 'Not signed in or the session expired, please sign in again',
    forbidden: 'You do not have permission for this action',
  },
};

export default tasks;
