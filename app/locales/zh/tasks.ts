/** Namespace 'tasks' (the /task async-task page) in Chinese (default and fallback). en/tasks.ts has the same keys. */
const tasks = {
  title: '异步任务',
  empty: '暂无任务',
  filters: {
    label: '筛选任务',
    channel: '渠道 ID',
    taskId: '任务 ID',
    start: '开始时间（{{zone}}）',
    end: '结束时间（{{zone}}）',
    pageSize: '每页条数',
    submit: '查询',
    reset: '重置',
  },
  columns: {
    submitTime: '提交时间',
    finishTime: '结束时间',
    progress: '进度',
    duration: '花费时间',
    channel: '渠道',
    platform: '平台',
    action: '类型',
    taskId: '任务 ID',
    status: '任务状态',
    failReason: '失败原因',
  },
  duration: '{{seconds}} 秒',
  platform: { suno: 'Suno', unknown: '未知' },
  action: { MUSIC: '生成音乐', LYRICS: '生成歌词', unknown: '未知' },
  status: {
    success: '成功',
    notStart: '未启动',
    submitted: '队列中',
    inProgress: '执行中',
    failure: '失败',
    queued: '排队中',
    unknown: '未知',
    submitting: '提交中',
  },
  record: {
    title: '任务详情',
    show: '查看任务 {{id}} 的完整记录',
    close: '关闭',
  },
  errors: {
    invalidInput: '输入不合法',
    unauthorized: '未登录或登录已过期，请重新登录',
    forbidden: '无权进行此操作',
  },
};

export type TasksResources = typeof tasks;
export default tasks;
