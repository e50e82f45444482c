-- wrk script: POST one builtin chat turn; the key comes from the CHAT_KEY
-- environment variable.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("CHAT_KEY")
wrk.body = '{"message":"Our packing station cannot keep up and orders ship late","mode":"operator"}'
