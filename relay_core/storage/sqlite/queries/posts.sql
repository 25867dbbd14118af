-- What each operator platform did with a notification or an approval (relay_core/storage/
-- posts.py runs these).

-- name: insert_post
-- What a platform did with :subject :subject_id.
INSERT INTO posts (subject, subject_id, bridge, platform_message_id, status, error, created_at)
VALUES (:subject, :subject_id, :bridge, :platform_message_id, :status, :error, :created_at);

-- name: posts_of_subjects
-- The posts of the :subject (notification or approval) of each id in :subject_ids, oldest
-- first.
SELECT * FROM posts
WHERE subject = :subject AND subject_id IN (SELECT value FROM json_each(:subject_ids))
ORDER BY post_id;

-- name: subject_of_post
-- Which :subject a platform's message carries.
SELECT subject_id FROM posts
WHERE subject = :subject AND bridge = :bridge AND platform_message_id = :platform_message_id
LIMIT 1;
