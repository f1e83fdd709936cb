import type { DashboardResources } from '#app/locales/zh/dashboard.ts';

const dashboard: DashboardResources = {
  title: 'Data dashboard',
  intro: 'Quota, tokens and calls per model, aggregated by the hour.',
  disabled: 'The data dashboard is turned off. An administrator can turn it on in the operation settings.',
  filters: {
    label: 'Filter data',
    start: 'Start time',
    end: 'End time',
    granularity: 'Granularity',
    username: 'Username',
    usernameHint: 'Empty for all users',
    submit: 'Search',
    reset: 'Reset',
    timeZone: 'Time zone: {{tz}}',
  },
  granularity: { hour: 'Hour', day: 'Day', week: 'Week' },
  metric: { label: 'Chart metric', quota: 'Quota used', tokens: 'Tokens', count: 'Calls' },
  summary: {
    label: 'Summary',
    quota: 'Quota used',
    tokens: 'Tokens',
    count: 'Calls',
    rpm: 'Average RPM',
    tpm: 'Average TPM',
  },
  charts: {
    byModel: '{{metric}} by model',
    calls: 'Calls over time',
    share: 'Quota share by model',
    shareByCount: 'Call share by model',
    empty: 'No data in the selected range',
    point: '{{bucket}}: {{value}}',
    bar: '{{bucket}} · {{model}}: {{value}}',
    slice: '{{model}}: {{value}} ({{percent}})',
    chartLabel: '{{title}}, {{from}} to {{to}}',
    other: 'Other',
  },
  table: {
    caption: 'Data per time bucket and model',
    time: 'Time',
    model: 'Model',
    quota: 'Quota',
    tokens: 'Tokens',
    count: 'Calls',
    showTable: 'Show the data table',
  },
  errors: {
    invalidInput: 'Invalid input',
    startTimestamp: 'start_timestamp is not a valid timestamp',
    endTimestamp: 'end_timestamp is not a valid timestamp',
    spanTooLong: 'The time span cannot exceed one month',
    endBeforeStart: 'The end time cannot be before the start time',
    tooManyBuckets:
      'Too many time buckets (at most {{max}}): shorten the range or choose a coarser granularity',
    badTime: 'The time is not valid',
    forbidden: 'You are not allowed to do this',
  },
};

export default dashboard;
