// Maxy graph schema. Applied idempotently by `maxy schema apply`.
// {{EMBED_DIMENSIONS}} is replaced at apply time with the embedder's dimensions (EMBED_DIMENSIONS).
// Vector indexes are discovered at run time through SHOW INDEXES: a new one here becomes searchable
// without code changes. Labels must also be in maxy/graph/allowlist.py (a test checks both agree).

// ---- Stable node id ----
// Every node the write primitive stores carries the base label :Node beside its own labels,
// so one constraint makes nodeId unique across the graph and gives an index for lookups.
CREATE CONSTRAINT node_node_id IF NOT EXISTS FOR (n:Node) REQUIRE n.nodeId IS UNIQUE;
CREATE INDEX node_account IF NOT EXISTS FOR (n:Node) ON (n.accountId);
CREATE INDEX node_deleted_at IF NOT EXISTS FOR (n:Node) ON (n.deletedAt);
CREATE INDEX node_attachment IF NOT EXISTS FOR (n:Node) ON (n.attachmentId);
CREATE INDEX conversation_session IF NOT EXISTS FOR (n:Conversation) ON (n.sessionId);
CREATE INDEX message_session IF NOT EXISTS FOR (n:Message) ON (n.sessionId);
CREATE INDEX task_kind IF NOT EXISTS FOR (n:Task) ON (n.kind);
// Audit retention (`maxy audit prune`, AUDIT_RETENTION_DAYS) finds old ToolCalls without a scan.
CREATE INDEX tool_call_created IF NOT EXISTS FOR (n:ToolCall) ON (n.createdAt);
// The canonical name of a named node (lower case, punctuation and spacing folded): entity
// resolution and exact-name lookups find a node by it without scanning.
CREATE INDEX node_name_key IF NOT EXISTS FOR (n:Node) ON (n.nameKey);
// A community's member guard finds a member's profile and memberships by memberId.
CREATE INDEX member_profile_member IF NOT EXISTS FOR (n:MemberProfile) ON (n.memberId);
CREATE INDEX network_membership_member IF NOT EXISTS FOR (n:NetworkMembership) ON (n.memberId);
// Leases (maxy/graph/leases.py): one process runs each round of a periodic job, such as the
// negotiation sweep; outside the :Node hierarchy. One Lease per name, one LeaseRound per round.
CREATE CONSTRAINT lease_name IF NOT EXISTS FOR (l:Lease) REQUIRE l.name IS UNIQUE;
CREATE CONSTRAINT lease_round IF NOT EXISTS FOR (r:LeaseRound) REQUIRE (r.name, r.round) IS UNIQUE;
// Console sessions and one-time login links (maxy.webconsole), kept in the graph so every
// `maxy serve` replica sharing it knows them: found by the digest of the cookie or link; expired
// ones are deleted a small batch at a time, found through `expires`. Neither is a :Node.
CREATE CONSTRAINT console_session_digest IF NOT EXISTS FOR (s:ConsoleSession) REQUIRE s.digest IS UNIQUE;
CREATE INDEX console_session_expires IF NOT EXISTS FOR (s:ConsoleSession) ON (s.expires);
CREATE CONSTRAINT console_login_digest IF NOT EXISTS FOR (l:ConsoleLogin) REQUIRE l.digest IS UNIQUE;
CREATE INDEX console_login_expires IF NOT EXISTS FOR (l:ConsoleLogin) ON (l.expires);

// ---- One cosine HNSW vector index per indexed label ----
// accountId is an additional (filter) property: SEARCH ... WHERE n.accountId = $acc filters inside
// the index, so one tenant's hits are never crowded out by another's (Cypher 25, Neo4j 2026.01+).
// No quantization (`vector.quantization.enabled: false`, which every supported version takes and
// 2026.06+ reports as `vector.quantization.type` NONE; 2026.08's default is BINARY): on a
// 100k-vector account recall@10 against exact search is 0.912 instead of 0.575, at no cost in
// latency (docs/benchmarks.md, "Vector index settings"). `maxy schema apply` rebuilds an index
// whose live quantization differs from this, from the stored vectors (nothing is re-embedded).
CYPHER 25 CREATE VECTOR INDEX question_embedding IF NOT EXISTS FOR (n:Question) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX defined_term_embedding IF NOT EXISTS FOR (n:DefinedTerm) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX review_embedding IF NOT EXISTS FOR (n:Review) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX service_embedding IF NOT EXISTS FOR (n:Service) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX person_embedding IF NOT EXISTS FOR (n:Person) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX local_business_embedding IF NOT EXISTS FOR (n:LocalBusiness) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX price_specification_embedding IF NOT EXISTS FOR (n:PriceSpecification) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX task_embedding IF NOT EXISTS FOR (n:Task) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX creative_work_embedding IF NOT EXISTS FOR (n:CreativeWork) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX digital_document_embedding IF NOT EXISTS FOR (n:DigitalDocument) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX knowledge_document_embedding IF NOT EXISTS FOR (n:KnowledgeDocument) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX section_embedding IF NOT EXISTS FOR (n:Section) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX conversation_embedding IF NOT EXISTS FOR (n:Conversation) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX message_embedding IF NOT EXISTS FOR (n:Message) ON n.embedding WITH [n.accountId, n.sessionId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX event_embedding IF NOT EXISTS FOR (n:Event) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX workflow_embedding IF NOT EXISTS FOR (n:Workflow) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX preference_embedding IF NOT EXISTS FOR (n:Preference) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};

CYPHER 25 CREATE VECTOR INDEX organization_embedding IF NOT EXISTS FOR (n:Organization) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX company_embedding IF NOT EXISTS FOR (n:Company) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX concept_embedding IF NOT EXISTS FOR (n:Concept) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX product_embedding IF NOT EXISTS FOR (n:Product) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX offer_embedding IF NOT EXISTS FOR (n:Offer) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX place_embedding IF NOT EXISTS FOR (n:Place) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX project_embedding IF NOT EXISTS FOR (n:Project) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX note_embedding IF NOT EXISTS FOR (n:Note) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX report_embedding IF NOT EXISTS FOR (n:Report) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX answer_embedding IF NOT EXISTS FOR (n:Answer) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX topic_embedding IF NOT EXISTS FOR (n:Topic) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX skill_embedding IF NOT EXISTS FOR (n:Skill) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX goal_embedding IF NOT EXISTS FOR (n:Goal) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX decision_embedding IF NOT EXISTS FOR (n:Decision) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX user_profile_embedding IF NOT EXISTS FOR (n:UserProfile) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX admin_user_embedding IF NOT EXISTS FOR (n:AdminUser) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX email_thread_embedding IF NOT EXISTS FOR (n:EmailThread) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX email_embedding IF NOT EXISTS FOR (n:Email) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX article_embedding IF NOT EXISTS FOR (n:Article) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX alert_embedding IF NOT EXISTS FOR (n:Alert) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX briefing_embedding IF NOT EXISTS FOR (n:Briefing) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX fact_embedding IF NOT EXISTS FOR (n:Fact) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX memory_entry_embedding IF NOT EXISTS FOR (n:MemoryEntry) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
// A community's records that discovery finds by meaning (maxy.community); not in entity_search:
// they are member-private and read only through the member guard.
CYPHER 25 CREATE VECTOR INDEX member_profile_embedding IF NOT EXISTS FOR (n:MemberProfile) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX profile_hyde_embedding IF NOT EXISTS FOR (n:ProfileHyde) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX intent_embedding IF NOT EXISTS FOR (n:Intent) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};
CYPHER 25 CREATE VECTOR INDEX hyde_document_embedding IF NOT EXISTS FOR (n:HydeDocument) ON n.embedding WITH [n.accountId]
  OPTIONS {indexConfig: {`vector.dimensions`: {{EMBED_DIMENSIONS}}, `vector.similarity_function`: 'cosine', `vector.quantization.enabled`: false}};

// ---- Universal BM25 over every operator-meaningful label and the canonical text properties ----
// accountId is indexed as well so a query can require the caller's account inside Lucene (with
// boost 0, it selects without scoring); it is not a searchable text property.
CREATE FULLTEXT INDEX entity_search IF NOT EXISTS FOR (n:Question|DefinedTerm|Review|Service|Person|LocalBusiness|PriceSpecification|Task|CreativeWork|DigitalDocument|KnowledgeDocument|Section|Chunk|Conversation|Message|Event|Workflow|Preference|Organization|Company|Concept|Product|Offer|Place|Project|Note|Report|Answer|Topic|Skill|Goal|Decision|UserProfile|AdminUser|EmailThread|Email|Article|Alert|Briefing|Fact|MemoryEntry)
  ON EACH [n.name, n.displayName, n.alternateName, n.firstName, n.lastName, n.givenName, n.familyName, n.title, n.headline, n.subject, n.summary, n.description, n.body, n.bodyPreview, n.content, n.text, n.compiledTruth, n.email, n.jobTitle, n.category, n.address, n.question, n.answer, n.notes, n.reviewBody, n.caption, n.slug, n.keywordsText, n.dateText, n.accountId]
  OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: false}};
