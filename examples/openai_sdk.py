# The official OpenAI SDK for Python (pip install openai): a completion, then a stream.
import os

from openai import OpenAI

client = OpenAI(
    base_url=os.environ.get("ADAPTER_URL", "http://localhost:8080/v1"),
    api_key=os.environ.get("WORKSPACE_API_KEY", "any-key-works-locally"),
    default_headers={"Service-Workspace": os.environ.get("WORKSPACE_ID", "demo")},
)

completion = client.chat.completions.create(
    model="ask",
    messages=[{"role": "user", "content": "How does the adapter cite sources?"}],
)
message = completion.choices[0].message
print(message.content)
# Annotations and sources are read from the plain dict: file_citation is not in the SDK's types.
for annotation in completion.model_dump()["choices"][0]["message"].get("annotations") or []:
    # Offsets count code points, so Python slicing finds the marker.
    start, end = annotation["start_index"], annotation["end_index"]
    print("cites", annotation["file_citation"]["filename"], "at", message.content[start:end])

stream = client.chat.completions.create(
    model="reason",
    messages=[{"role": "user", "content": "What happens when a query fails?"}],
    stream=True,
)
for chunk in stream:
    if chunk.choices and chunk.choices[0].delta.content:
        print(chunk.choices[0].delta.content, end="", flush=True)
print()
