/** Namespace 'playground' in Chinese (default and fallback): the /playground page. en/playground.ts must have exactly the same keys (its type). */
const playground = {
  title: '操练场',
  expired: '未登录或登录已过期，请重新登录',
  settings: {
    heading: '模型设置',
    group: '分组',
    model: '模型',
    noModels: '该分组下暂无可用模型',
    applyGroup: '切换分组',
    temperature: '温度',
    temperatureHint: '取值 0.1 到 1，越高回答越随机',
    maxTokens: '最大 Token 数',
    maxTokensHint: '0 表示不限制',
    system: '系统提示词',
  },
  chat: {
    heading: '对话',
    empty: '发送一条消息开始对话。',
    you: '你',
    assistant: '助手',
    input: '消息',
    placeholder: '输入消息，Ctrl + Enter 发送',
    send: '发送',
    sending: '发送中…',
    stop: '停止生成',
    clear: '清空上下文',
    status: {
      loading: '正在等待回复…',
      incomplete: '正在生成…',
      complete: '回复完成',
      error: '出错',
    },
  },
  errors: {
    empty: '请输入消息',
    tooLong: '消息过长（最多 {{max}} 个字符）',
    noModel: '请选择模型',
    badReply: '无法读取模型的回复',
    network: '网络错误，请稍后再试',
    unknownIntent: '未知操作',
  },
};

export type PlaygroundResources = typeof playground;
export default playground;
