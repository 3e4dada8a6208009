"""Labelled sets for structured records and metadata, built from People's Daily text.

``petition_rows``: rows of a petitions-like table: category, district,
the district office's long standard notice printed on every row, date, submitter (often null), notes
(mostly null) and the complaint text (one or two paragraphs of an article). Re-submissions repeat a
complaint with reprint-style edits, the same category and district, another date, sometimes a missing
submitter. Rows of one district share the office notice: treated as one text blob, that shared text
pulls unrelated short complaints together; per-field weights can leave it out.

``tagged_docs``: documents with tags. Reprints keep their
original's tags (one may be dropped or added); hard negatives are short announcements printed inside
one long standard template, different in subject and tags: their texts are near-identical, their
metadata are not.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .corpus import Article
from .variants import make_variant

__all__ = ["LabelledRecord", "blob_text", "petition_rows", "tagged_docs", "template_text"]

CATEGORIES = ["城建", "环保", "交通", "教育", "医疗", "劳动保障", "住房", "治安", "农业", "其他"]
DISTRICTS = ["东城", "西城", "朝阳", "海淀", "丰台", "石景山", "门头沟", "房山", "通州", "顺义", "昌平", "大兴"]
TOPICS = [
    "经济",
    "农业",
    "教育",
    "科技",
    "文化",
    "体育",
    "外交",
    "军事",
    "卫生",
    "环境",
    "交通",
    "金融",
    "能源",
    "法治",
    "社会",
    "就业",
    "住房",
    "旅游",
    "扶贫",
    "改革",
]


def _office(district: str) -> str:
    return (
        f"受理单位：{district}区人民政府信访办公室；地址：{district}区政府大院三号楼一层；"
        "接待时间：工作日上午九时至下午五时；办理时限：自受理之日起六十日内办结并书面答复；"
        "如对处理意见不服，可自收到书面答复之日起三十日内请求上一级行政机关复查。"
    )


@dataclass(frozen=True)
class LabelledRecord:
    id: str
    group: str
    fields: dict[str, Any]


def _complaint(article: Article, rng: random.Random) -> list[str]:
    paras = [p for p in article.paragraphs if len(p) >= 40] or list(article.paragraphs)
    start = rng.randrange(len(paras))
    return paras[start : start + rng.randint(1, 2)]


def petition_rows(
    articles: Sequence[Article], seed: int, groups: int = 200, singles: int = 400
) -> list[LabelledRecord]:
    rng = random.Random(seed)
    pool = [a for a in articles if sum(len(p) for p in a.paragraphs) >= 80]
    rng.shuffle(pool)
    rows: list[LabelledRecord] = []

    def row(
        rid: str,
        group: str,
        paras: list[str],
        category: str,
        district: str | None,
        day: int,
        submitter: str | None,
        note: str | None,
    ) -> LabelledRecord:
        return LabelledRecord(
            rid,
            group,
            {
                "category": category,
                "district": district,
                "office": _office(district or "市"),
                "date": f"1998-{1 + day // 28:02d}-{1 + day % 28:02d}",
                "submitter": submitter,
                "notes": note,
                "complaint": "\n".join(paras),
            },
        )

    for g, art in enumerate(pool[:groups]):
        gid = f"p{seed}-g{g}"
        paras = _complaint(art, rng)
        category, district = rng.choice(CATEGORIES), rng.choice(DISTRICTS)
        submitter = f"群众{rng.randrange(10000):04d}"
        rows.append(row(f"{gid}-0", gid, paras, category, district, rng.randrange(300), submitter, None))
        for v in range(rng.randint(1, 3)):
            edited, _ = make_variant(paras, rng)
            rows.append(
                row(
                    f"{gid}-{v + 1}",
                    gid,
                    edited,
                    category,
                    district if rng.random() < 0.9 else None,
                    rng.randrange(300),
                    submitter if rng.random() < 0.5 else None,
                    "重复投诉" if rng.random() < 0.2 else None,
                )
            )
    for k, art in enumerate(pool[groups : groups + singles]):
        rid = f"p{seed}-n{k}"
        rows.append(
            row(
                rid,
                rid,
                _complaint(art, rng),
                rng.choice(CATEGORIES),
                rng.choice(DISTRICTS),
                rng.randrange(300),
                f"群众{rng.randrange(10000):04d}" if rng.random() < 0.4 else None,
                None,
            )
        )
    rng.shuffle(rows)
    return rows


def blob_text(fields: dict[str, Any]) -> str:
    """A record flattened to one text, labels included: what a user without per-field weights indexes."""
    labels = {
        "category": "类别",
        "district": "区县",
        "office": "受理单位",
        "date": "日期",
        "submitter": "投诉人",
        "notes": "备注",
        "complaint": "内容",
    }
    return "\n".join(f"{labels.get(k, k)}：{v}" for k, v in fields.items() if v not in (None, ""))


def template_text(subject: str, detail: str) -> str:
    return (
        f"关于{subject}的公告。根据有关规定和工作安排，现将{subject}的有关事项公告如下："
        f"{detail}。请各有关单位和个人认真阅读本公告，按照要求做好相关准备工作，如有疑问，"
        "请在工作日内拨打咨询电话或登录官方网站查询，本公告自发布之日起施行，解释权归发布机关所有。"
        "特此公告。欢迎社会各界监督，联系电话一二三四五六七，联系地址人民路一号。"
    )


def tagged_docs(
    articles: Sequence[Article],
    seed: int,
    groups: int = 150,
    templates: int = 40,
    per_template: int = 4,
    singles: int = 150,
) -> list[LabelledRecord]:
    rng = random.Random(seed)
    pool = [a for a in articles if len(a.paragraphs) >= 2]
    rng.shuffle(pool)
    docs: list[LabelledRecord] = []

    def tags_for() -> list[str]:
        return rng.sample(TOPICS, rng.randint(2, 4))

    for g, art in enumerate(pool[:groups]):
        gid = f"t{seed}-g{g}"
        tags = tags_for()
        docs.append(LabelledRecord(f"{gid}-0", gid, {"title": art.title, "text": art.text, "tags": tags}))
        for v in range(rng.randint(1, 3)):
            paras, _ = make_variant(art.paragraphs, rng)
            vtags = list(tags)
            if rng.random() < 0.3 and len(vtags) > 2:
                vtags.pop(rng.randrange(len(vtags)))
            docs.append(
                LabelledRecord(f"{gid}-{v + 1}", gid, {"title": art.title, "text": "\n".join(paras), "tags": vtags})
            )
    used = groups
    for t in range(templates):
        for k in range(per_template):
            art = pool[used]
            used += 1
            rid = f"t{seed}-x{t}-{k}"
            subject = art.title[:12] or f"事项{t}"
            detail = art.paragraphs[0][:40]
            docs.append(
                LabelledRecord(
                    rid, rid, {"title": f"公告：{subject}", "text": template_text(subject, detail), "tags": tags_for()}
                )
            )
    for k, art in enumerate(pool[used : used + singles]):
        rid = f"t{seed}-n{k}"
        docs.append(LabelledRecord(rid, rid, {"title": art.title, "text": art.text, "tags": tags_for()}))
    rng.shuffle(docs)
    return docs
