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
for annotation in message.annotations or []:
    citation = annotation.url_citation
    # Offsets count code points, so Python slicing finds the marker.
    print("cites", citation.title, citation.url, "at", message.content[citation.start_index:citation.end_index])

stream = client.chat.completions.create(
    model="reason",
    messages=[{"role": "user", "content": "What happens when a query fails?"}],
    stream=True,
)
for chunk in stream:
    if chunk.choices and chunk.choices[0].delta.content:
        print(chunk.choices[0].delta.content, end="", flush=True)
print()
