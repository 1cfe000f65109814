// The test page: the AI SDK docs' Chat component (useChat from @ai-sdk/react with resume and the docs'
// prepareSendMessagesRequest), its chatData loaded from GET /api/chat/:id as a Next.js page loads it on the server.
import React, { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport } from "ai";

function Chat({ chatData, resume = false }) {
  const { messages, sendMessage, status } = useChat({
    id: chatData.id,
    messages: chatData.messages,
    resume, // Enable automatic stream resumption
    transport: new DefaultChatTransport({
      // You must send the id of the chat
      prepareSendMessagesRequest: ({ id, messages }) => {
        return {
          body: {
            id,
            message: messages[messages.length - 1],
          },
        };
      },
    }),
  });
  const [input, setInput] = useState("");
  return (
    <div>
      <div id="status">{status}</div>
      {messages.map((m) => (
        <div key={m.id} className={`message ${m.role}`}>
          {m.parts.filter((p) => p.type === "text").map((p) => p.text).join("")}
        </div>
      ))}
      <form onSubmit={(e) => { e.preventDefault(); sendMessage({ text: input }); setInput(""); }}>
        <input id="input" value={input} onChange={(e) => setInput(e.target.value)} />
      </form>
    </div>
  );
}

function Page() {
  const id = new URLSearchParams(location.search).get("chat");
  const [chatData, setChatData] = useState(null);
  useEffect(() => {
    fetch(`/api/chat/${id}`).then((r) => r.json()).then((c) => setChatData({ id, messages: c.messages }));
  }, [id]);
  return chatData ? <Chat chatData={chatData} resume /> : <div id="loading">loading</div>;
}

createRoot(document.getElementById("root")).render(<Page />);
