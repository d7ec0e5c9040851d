"""Deterministic extraction: a person's message → short, self-contained memories (ING-5, ING-6).

No model and no network. The text is cleaned (``vodou:context`` fences, code blocks, quoted replies
and shell lines removed) and split into sentences; each sentence is then read as a person writes to
an assistant, which is rarely one tidy statement:

- **A request often carries a fact.** "I'm starting remote work on June 15, how can I plan my
  week?" keeps "I'm starting remote work on June 15." The sentence is cut where the request begins
  (", can you…", ", how do I…", ", but I'm not sure how…", "- any tips?") and the statement before
  it is read on its own; a sentence that is only a question or a request leaves nothing.
- **A run-on sentence is split, not dropped.** Sentences over ``WHOLE_WORDS`` are cut into clauses at
  ", and I…", ", but…", "; " where the next clause has its own subject; each clause is kept or dropped
  alone. A shorter statement is kept whole when one of its clauses is kept: its halves lean on each
  other ("My partner Stephen and I just celebrated 5 years…").
- **The task at hand is not memory.** "I'm trying to classify a triangle…", "I'm having trouble
  calculating…", "I've tried setting the headers, but…" are dropped, unless they carry the person's own
  figures ("…how my quiz score rose from 75% to 92%"); a reason they give is kept ("…, since I've
  improved by 20%").
- **A feeling frames a fact.** "I'm kinda worried that my emergency fund covers two months" keeps
  "My emergency fund covers two months."
- **A hedge lowers confidence instead of dropping** ("maybe", "I think", "not sure yet").
- **Kinds:** ``instruction`` (standing: "Always…", "Never…", "When I ask about X, …"),
  ``preference``, ``decision``, ``plan`` ("I'll…", "I'm going to…", a deadline), ``fact``.
- **A fact needs substance:** a first-person or possessive statement with a state or event verb,
  or any statement that carries a specific (a number, a date, a name). Chit-chat, thanks, bare
  requests, questions and sentences leaning on an earlier one ("It is due Friday") are dropped.

Each memory keeps the number of the sentence of its message it came from (``sentences`` numbering),
so a label or an audit can name it without quoting it. ``bench/extraction.py`` measures precision
and recall on labelled sentences of two sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vodou_desktop.ingest.fences import strip_context

KINDS = ("fact", "preference", "decision", "plan", "instruction")
MIN_WORDS = 2
MIN_CLAUSE_WORDS = 4  # a run-on sentence is cut only between clauses of at least this many words
WHOLE_WORDS = 30  # a statement this short is kept whole when a clause of it is kept: its parts lean on each other
MAX_WORDS = 60  # a clause longer than this after splitting is cut at a word boundary, marked "…"
HEDGED = 0.6  # the confidence of a hedged statement ("maybe", "I think", "not sure yet")
TENTATIVE = 0.8  # of an intention still being weighed ("I'm thinking of…", "I'm considering…")

_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`([^`\n]*)`")  # spans paired left to right; a long one is code, not words
LONG_CODE = 30  # an inline code span of at least this many characters is removed
_CODE_LINE = re.compile(r"^(?: {4}|\t|\$ |>>> |> |#!|[{}\[\]]\s*$)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[.!?])\s+(?=i\b)|(?<=\?)\s+")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_LEAD_IN = re.compile(
    r"^(?:also|oh|and|so|btw|by the way|anyway|fyi|just so you know|for context|note|ps|oh and|ok so|okay so|"
    r"well|hmm+|hm+|um+|uh+|yeah|yes|yep|ok|okay|alright|right|sure|great|cool|nice|perfect|awesome|"
    r"ok cool|okay cool|got it|i see|honestly|actually|basically|anyways|sounds (?:good|great|perfect)|"
    r"(?:that|this|it) (?:sounds|looks|seems) (?:good|great|perfect|fine|solid|like a (?:good |great |solid )?plan)|"
    r"thanks|thank you|thanks so much|thank you so much|good idea|great idea|makes sense|that makes sense|"
    r"i forgot to mention|forgot to mention|just so you know|for context|for the record|quick note|fyi)"
    r"\b(?: for [^,.!?]{1,60})?[,:;.!]*\s+", re.IGNORECASE)

_CHITCHAT = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|ty|ok|okay|great|cool|sure|lol|haha|sounds good|sounds great|"
    r"sounds like a plan|got it|nice|awesome|perfect|yes|no|yeah|yep|nope|hmm|good morning|good night|cheers|"
    r"certainly|of course|here is|here's|here are|i see|i understand|that makes sense|makes sense|no worries|"
    r"sorry|that helps|this helps|that's helpful|this is helpful|that's great|that's weird|that's strange|"
    r"that's interesting|that looks|this looks|these look|those look|looks good|good point|fair enough|"
    r"exactly|wow|oops|let's see|let me see|let me know|lmk)\b",
    re.IGNORECASE)
_REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|can we|could we|would it be|is it possible|"
    r"write|generate|create|explain|help|show|tell me|give me|walk me|make|fix|let's|lets|let me|"
    r"summari[sz]e|translate|draft|list|find|check|try|run|add|remove|rewrite|refactor|compare|suggest|"
    r"recommend|imagine|pretend|act as|review|describe|outline|provide|calculate|solve|prove|convert|"
    r"i (?:might |may |probably |still |also |just |really )?need (?:a bit |a little |a lot |some |your |"
    r"a few )?(?:more )?(?:help|advice|tips|ideas|guidance|clarification|explanation|pointers|input)|"
    r"my (?:main |real |next |last |other |first |second )?(?:question|questions|ask) (?:is|are|was|would be)|"
    r"i(?:'d| would) (?:like|love) (?:some|your|to get|to know|to hear|help|advice|tips|guidance|ideas|"
    r"a |an |you to|to see|to understand|to learn)|"
    r"i (?:just |really |also |only |still )?(?:want|wanna) (?:you to|to know|to understand|to learn|to make sure|"
    r"to ensure|to see|some|a few|know|understand|learn)|"
    r"(?:i'm|i am|we're)\s+(?:\w+\s+)?thinking about (?:how|what|whether|which|if|where|when|why)\b|"
    r"(?:i'm|i am|i was|i've been)\s+(?:kinda\s+|kind of\s+|a bit\s+|a little\s+|really\s+|so\s+|still\s+|"
    r"just\s+|also\s+|pretty\s+)*(?:looking for|hoping (?:you|for (?:some|your|advice|help|tips|ideas)|"
    r"to get (?:some|your|advice|help|tips|ideas|feedback|input|suggestions))|wondering|curious|"
    r"not sure|unsure|confused|lost|interested in (?:learning|knowing|understanding|how))|"
    r"i was wondering|i wonder|wondering|any (?:tips|ideas|advice|suggestions|thoughts)|"
    r"i(?:'ve| have) got (?:a|some|another|one more) (?:question|questions|problem|issue|doubt)|"
    r"i have (?:a|some|another|one more) (?:question|questions|doubt)|"
    r"i don't (?:know|understand|get)|i do not (?:know|understand)|i can't (?:figure|understand|seem|get)|"
    r"what if|how about|why not|is there|are there|if|unless|in case|otherwise)\b",
    re.IGNORECASE)
_QUESTION_START = re.compile(
    r"^(?:who|what|whats|what's|when|where|why|how|which|whose|whom|is|are|do|does|did|can|could|should|"
    r"would|will|shall|am|have|has|was|were|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|shouldn't|"
    r"any idea|i wonder|wondering)\b",
    re.IGNORECASE)
# Leaning on an earlier sentence from its first word ("It is due Friday"); a possessive ("His fiancée Ana
# is…") is judged by ``_UNRESOLVED`` instead: with a name or a date it stands on its own.
_DANGLING = re.compile(r"^(?:it|this|that|these|those|they|them|he|she|there|here|which|who|"
                       r"such|so|too|same|both|either|neither)\b", re.IGNORECASE)
# Where a request begins inside a sentence: what comes before may still be a statement.
_REQUEST_START = re.compile(
    r"(?:[,;:]|\s[-–—]|\.\.\.)\s*(?:and\s+|but\s+|so\s+|or\s+|then\s+|now\s+)*(?:"
    r"(?:can|could|would|will|do|should|shall|is|are|was|were|has|have|does|did|may|might)\s+"
    r"(?:you|we|i|it|this|that|there|these|those)\b|"
    r"(?:how|what|which|where|why|when|who|whether)\s+(?:\w+\s+){0,4}?(?:can|could|should|would|do|does|did|"
    r"will|might|may|is|are|am|was|were)\s+(?:i|we|you|it|this|that|there|my|our)\b|"
    r"(?:how|what|why)\s+(?:about|if|else|now|so)\b|how to\b|"
    r"(?:what|which|how)\s+(?:are|is)\s+(?:the|some|your|good|best)\b|"
    r"(?:what|how)\s+(?:\w+\s+)?(?:do you (?:think|suggest|recommend)|would you)\b|"
    r"(?:please|help me|tell me|show me|give me|walk me|let me know|any (?:tips|ideas|advice|suggestions))\b|"
    r"(?:i'm|i am|i was|i've been)\s+(?:\w+\s+)?(?:wondering|curious|not sure|unsure|hoping you|looking for|"
    r"trying to (?:figure|understand|work out|see|find out)|confused)\b|"
    r"(?:i|we)\s+(?:\w+\s+)?(?:wonder|need (?:help|some help|advice|your|tips|ideas|guidance)|"
    r"(?:would|'d)\s+(?:like|love)\s+(?:some|your|to get|to know|help|advice|tips|you)|"
    r"want (?:you to|to know|to make sure|to understand|some)|don't know|can't (?:figure|decide|seem)|"
    r"have (?:a|some) questions?)\b|"
    r"(?:i'd|we'd|i would|we would)\s+(?:really\s+)?(?:like|love|appreciate)\s+(?:to know|to understand|to learn|"
    r"to hear|to get|to see|some|your|any|help|advice|tips|ideas|you to|a few|more)\b|"
    r"(?:i|we)\s+(?:\w+\s+)?(?:want to|need to|wanna)\s+(?:know|understand|learn|figure out|find out)\b|"
    r"(?:i'm|i am|we're)\s+(?:\w+\s+)?thinking about (?:how|what|whether|which|if|where|when|why)\b|"
    r"(?:not sure|unsure)\s+(?:how|what|if|whether|where|which|why|about|when)\b|"
    r"(?:what do you think|thoughts|ideas|advice|suggestions|any thoughts)\s*\??\s*$"
    r")", re.IGNORECASE)
# Where a run-on statement may be cut: the next clause has its own subject.
_CLAUSE_BREAK = re.compile(
    r"(?:(?:;|,\s*(?:and|but|so|plus|while|whereas|although|though)?|\s(?:and|but|so|plus)|"
    r"\s[-–—])\s+(?=(?:i|i'm|i've|i'd|i'll|we|we're|we've|we'll|"
    r"(?:my|our)\s+(?:\S+\s+){0,4}?(?:is|are|was|were|has|have|had|will|would|can|could|does|did|\w+ed|\w+s)\s|"
    r"(?-i:[A-Z][a-z]+)(?:'s)?\s+(?:is|was|has|had|"
    r"said|suggested|recommended|advised|offered|helped|joined|agreed|told|asked|invited|introduced|"
    r"mentioned|shared|gave|sent|started|will|would))\b)|"
    r",\s*(?:like|as|after|when)\s+(?=(?:i|we|(?-i:[A-Z][a-z]+))\s+(?:\w+\s+)?(?:said|suggested|recommended|advised|"
    r"offered|told|asked|invited|mentioned|shared|met|started|joined|decided|agreed)\b))", re.IGNORECASE)
_POINTS_BACK = re.compile(r"\b(?:it|this|these|those|there|them|they|he|she|him|her|his|its|their|then)\b",
                          re.IGNORECASE)
_ENDS_BACK = re.compile(r"\b(?:it|them|there|this|that|these|those|then)\b[\s.,!]*(?:too|again|now)?[\s.,!]*$",
                        re.IGNORECASE)
_FRAME = re.compile(
    r"^(?:i'm|i am|i was|i've been|i feel|i'm feeling|i felt|i'm getting|i get|feeling)\s+"
    r"(?:kinda\s+|kind of\s+|sort of\s+|a bit\s+|a little\s+|really\s+|so\s+|pretty\s+|super\s+|very\s+|"
    r"quite\s+|totally\s+|also\s+|still\s+|just\s+|a little bit\s+|more\s+)*"
    r"(?:worried|stressed|frustrated|anxious|nervous|concerned|excited|glad|happy|thrilled|curious|"
    r"confused|overwhelmed|unsure|guilty|proud|relieved|disappointed|grateful|torn|upset|annoyed|"
    r"scared|afraid|afraid|hopeful|pleased|delighted|bummed|sad|surprised|impressed|motivated|"
    r"encouraged|satisfied|optimistic|pessimistic|skeptical|sceptical)\s+"
    r"(?:that|because|since|as|how|now that)\s+(?=\S)", re.IGNORECASE)
# The task at hand with the assistant, not something about the person: "I'm trying to calculate…", "I'm having
# trouble solving…", "I made a mistake by using s = 12". Only a reason it gives may last ("…, since I've
# improved by 20%"). Goals and struggles of a life are not tasks: "I'm trying to save $500", "to rebuild my
# motivation".
_TASK = re.compile(
    r"^(?:(?:i'm|i am|i was|i've been|i have been)\s+(?:kinda\s+|kind of\s+|a bit\s+|a little\s+|really\s+|still\s+|"
    r"just\s+|also\s+|currently\s+|now\s+|so\s+)*(?:trying|attempting|struggling|stuck|working|"
    r"having\s+(?:some\s+|a\s+little\s+|a\s+bit\s+of\s+|a\s+hard\s+time|real\s+)?(?:trouble|difficulty|"
    r"difficulties|issues|problems)?)(?:\s+(?:to|with|on|at|in))?\s+(?:\w+\s+)?"
    r"(?:calculat|comput|classif|solv|prov(?:e|ing)\b|understand|figur|work(?:ing)? out|determin|fix|debug|"
    r"appl(?:y|ying)\b|grasp|deepen my understanding|identif|simplif|evaluat|deriv|interpret|visuali[sz]|"
    r"differentiat|integrat(?:e|ing)\b|troubleshoot|get my head|wrap(?:ping)? my head|make sense)|"
    r"(?:i think\s+)?i(?:'ve| have)?\s+(?:made an? (?:\w+\s+)?(?:mistake|error)|messed up|got (?:confused|stuck|lost))|"
    r"i(?:'ve| have)\s+(?:also\s+|already\s+|even\s+)?tried\s+(?:simply\s+|properly\s+|manually\s+)?"
    r"(?:to\s+\w+|using|setting|changing|adding|removing|installing|running|configuring|inlining|replacing|checking|"
    r"a few|several|different|everything|all sorts))",  # "I've tried setting the headers, but…"
    re.IGNORECASE)
_OWN = re.compile(r"\b(?:my|our)\b|\bI\s+(?:\w+ly\s+)?(?:\w+ed|finished|began|did|got|took|made|wrote|bought|read|"
                  r"lost|won|spent|paid|sold|went|kept|met|grew)\b", re.IGNORECASE)
_TASK_REASON = re.compile(
    r"(?:,\s*|\s)(?:especially\s+|particularly\s+|mainly\s+)?(?:since|because|as|now that|given that|after)\s+"
    r"(?=(?:i|i'm|i've|we|we're|we've|my|our)\b)", re.IGNORECASE)
_HEARSAY = re.compile(r"^(?:i(?:'ve| have)? (?:heard|read|seen) (?:that|about|somewhere|online|people|it said)|"
                      r"i(?:'ve| have)? heard|people say|they say|apparently)\b",
                      re.IGNORECASE)
_OPENER = re.compile(r"^(?:given (?:that )?|considering (?:that )?|since |as |because |now that |seeing as )"
                     r"(?=(?:i|i'm|i've|we|we're|we've|my|our)\b)", re.IGNORECASE)
_FEEL_LIKE = re.compile(r"^(?:i\s+(?:really\s+|honestly\s+|kinda\s+)?(?:feel|felt|think|believe|guess|reckon|suppose)"
                        r"\s+(?:like\s+|that\s+)?(?=(?:i|i'm|i've|i'll|we|we're|we'll|my|our|it|this|that|they|the)\b)|"
                        r"i\s+(?:really\s+)?(?:feel|felt)\s+(?:like|that)|i\s+(?:just\s+)?came across the fact "
                        r"that|i(?:'m| am) (?:glad|happy|proud) "
                        r"(?:that|to say))\s+", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|i guess|i suppose|i think|i believe|i reckon|might|may be|"
    r"not sure(?: yet)?|not certain|no idea|i'm not 100|sort of|kind of thinking|hopefully)\b", re.IGNORECASE)
_TENTATIVE = re.compile(r"\b(?:i'm|i am|we're|we are)\s+(?:\w+\s+)?(?:thinking (?:of|about)|considering|"
                        r"leaning towards?|weighing|debating)\b", re.IGNORECASE)
# A specific: a number, a month or weekday, a quoted title, or a name (a capitalised word past the start).
_MONTH = (r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
_SPECIFIC = re.compile(
    rf"\d|\b(?:{_MONTH}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|"
    r"next (?:week|month|year|quarter)|last (?:week|month|year)|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred|thousand|million|billion|dozen|half|once|twice|"
    r"weekly|daily|monthly|yearly|annually|every (?:day|week|month|morning|evening|night))\b|"
    r"[\"“][^\"”]{2,}[\"”]", re.IGNORECASE)
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]{2,}\b")
_WEAK_FACT = re.compile(r"^(?:the|this|a|an)\s+(?:\S+\s+){0,5}?(?:is|are|was|were|costs|takes|starts|ends|"
                        r"runs|has|had|includes|covers|lasts)\b", re.IGNORECASE)
_NAME = re.compile(r"(?<=\s)(?!I\b|I'[a-z]+\b)[A-Z][\w'’.-]*[a-z0-9]")

# How the assistant should answer, said once for every later answer ("Reply in British English.").
_STANDING = re.compile(
    r"^(?:please\s+)?(?:(?:reply|answer|respond|talk to me|speak to me|write to me)\s+(?:in|with|using|like|as)\b|"
    r"(?:address|call) me\b|format (?:all|every|each|any|dates|numbers|times|prices|amounts)\b|"
    r"(?:use|give|show|quote) (?:metric|imperial|celsius|fahrenheit|british|american|us|uk|24-hour|12-hour)\b|"
    r"(?:don't|do not) (?:ever )?(?:use|recommend|suggest|mention|include|add|call|say)\b)",
    re.IGNORECASE)
# A pronoun whose thing is in another message, in a memory with nothing specific of its own to hold on to.
_UNRESOLVED = re.compile(
    r"\b(?:it|its|they|them|their|he|him|his|she|her|(?:this|these|those)(?!\s+(?:morning|afternoon|evening|"
    r"weekend|week|month|year|quarter|semester|term|spring|summer|autumn|fall|winter|time|season)))\b", re.IGNORECASE)
_DANGLING_OBJECT = re.compile(
    r"\b(?:do|try|use|follow|take|set|check|read|review|keep|leave|send|ask|fix|change|start|finish|test|apply|"
    r"implement|consider|share|run|schedule|book|get|buy|make)\s+(?:it|that|this|them|those|these|one)"
    r"(?:\s+(?:up|out|in|on|off|back|over|through|again|closely|right away|first|later|too|as is))?\b", re.IGNORECASE)
# Pointing to what follows the sentence (code, a list): "I've been using the following code to measure TTI:".
_POINTS_FORWARD = re.compile(r"\b(?:the following|as follows)\b|:\s*$", re.IGNORECASE)
_HERE_TAIL = re.compile(r"[,;]?\s*(?:and\s+|so\s+|but\s+)?(?:here(?:'s| is| are)|this is|these are)\b[^,;.!?]*:\s*$",
                        re.IGNORECASE)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i've|i'd|i'll|we|we're|we've|my|our)\b", re.IGNORECASE)

KIND_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("instruction", re.compile(
        r"^(?:please\s+|and\s+)?(?:always|never|don't ever|do not ever|from now on|going forward|in (?:the )?future|"
        r"whenever i|when i ask|every time i ask|each time i ask|any time i ask|if i ask)\b|"
        r"^(?:please\s+)?(?:use|include|give|provide|format|answer|reply|respond|keep|write|show|add|avoid|"
        r"remember|make sure|start|end|list|report|highlight|mention|cite|confirm|stick to|prefer|stop|"
        r"don't|do not)\b.{3,}\b(?:when(?:ever)? i (?:ask|request|want|need|mention|say)|"
        r"every time i|each time i|from now on|going forward|in (?:all )?(?:your |future )?(?:answers|replies|"
        r"responses))\b", re.IGNORECASE)),
    ("preference", re.compile(
        r"\b(?:i|we) (?:really |strongly |much |generally |usually |definitely |actually |still |also |"
        r"kinda |tend to |do |don't |do not )?(?:prefer|like|love|hate|dislike|enjoy|adore|detest|loathe|"
        r"can't stand|cannot stand|avoid|want all)\b|\bmy (?:favou?rite|preferred|preference|go-to)\b|\bprefers?\b|"
        r"\bi'd rather\b|"
        r"\bi would rather\b|\bi(?:'m| am) (?:\w+ )?(?:a (?:big |huge )?fan of|not a fan of|into|passionate about|"
        r"obsessed with|keen on|not keen on|a (?:morning|night|coffee|tea|dog|cat) (?:person|owl|lover))\b|"
        r"\bi always\b|\bi never\b|\bi usually\b|\bi tend to\b|\bi(?:'ve| have) always\b|"
        r"\bi(?:'ve| have) (?:shifted|changed) my preference\b", re.IGNORECASE)),
    ("decision", re.compile(
        r"\b(?:decided|decide to|we chose|i chose|chose to|chosen|going with|go with|went with|settled on|"
        r"agreed|picked(?! up)|switched to|switching to|will use|standardi[sz]ed on|ruled out|"
        r"dropped|opted|opting|committed to|sticking with|stick with|rejected|declined|turned down|"
        r"made the (?:right |final )?(?:call|decision|choice)|finali[sz]ed|locked in|signed up for|"
        r"prioriti[sz]ed|prioriti[sz]ing|compromised)\b", re.IGNORECASE)),
    ("plan", re.compile(
        r"\b(?:i'll|i will|we'll|we will|i'm going to|i am going to|we're going to|i'm gonna|gonna|"
        r"plan to|planning to|planning on|planning (?:a|an|my|our|the|for)|plan is|"
        r"intend to|aim to|aiming to|aiming for|my goal|our goal|"
        r"set a goal|goal is|hoping to|hope to|(?:i|we) should(?!'ve| have)|(?:i|we) could|(?:i|we) might|"
        r"want to (?:finish|complete|reach|get|start|launch|save|lose|"
        r"run|hit)|need to (?:finish|complete|submit|deliver)|deadline|is due|due (?:on|by)|scheduled|"
        r"booked|next (?:week|month|quarter|year)|thinking of|thinking about|considering|"
        r"(?:have|'ve got|have got|got)\s+(?:a|an|my|our)\s+(?:\w+\s+)?(?:meeting|appointment|interview|call|exam|"
        r"test|presentation|deadline|flight|session|class|trip|date|review|surgery|check-?up)|"
        r"(?:i'm|we're|i am|we are)\s+(?:\w+ly\s+)?(?:launching|starting|moving|leaving|flying|travel+ing|visiting|"
        r"meeting|presenting|hosting|getting married|relocating|retiring|joining|heading)|"
        r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b", re.IGNORECASE)),
    ("fact", re.compile(
        r"(?i:^(?:i(?:'m| am| was)\s+(?:a|an|the|\d+|now|currently|based|from|married|single|engaged|divorced|"
        r"retired|working|earning|making|living|using|running|learning|studying|taking|starting|moving|"
        r"leading|managing|teaching|building|developing|writing|training|preparing|saving|paying|renting|"
        r"expecting|pregnant|self-employed|employed|unemployed|freelanc\w*|vegetarian|vegan|left-handed|"
        r"in charge|responsible|part of|member|on|at|with|still|also|already|allergic|intolerant|diabetic|"
        r"colou?rblind|left-handed|right-handed|\d+)\b|"
        r"i(?:'ve| have)\s+(?:\w+\s+)?(?:been|got|gotten|had|started|completed|finished|added|increased|"
        r"reduced|improved|joined|met|hired|bought|purchased|booked|received|signed|submitted|secured|"
        r"spent|saved|lost|gained|made|created|built|written|read|watched|tried|noticed|identified|prepared|"
        r"documented|tracked|updated|revisited|shifted|set|scheduled|raised|cut|dropped|paid|sold|won|"
        r"earned|passed|failed|moved|switched|launched|published|released|taught|learned|learnt|done|"
        r"attended|visited|registered|enrolled|applied|accepted|a|an|two|three|\d+)\b|"
        r"i\s+(?:recently\s+|just\s+|also\s+|already\s+|finally\s+|currently\s+|now\s+|still\s+)*"
        r"(?:work|live|use|have|own|run|lead|manage|teach|study|speak|met|started|joined|got|bought|finished|"
        r"completed|moved|spent|earn|make|added|increased|reduced|improved|attended|received|submitted|"
        r"booked|hired|tried|noticed|found|learned|learnt|took|went|visited|watched|read|wrote|built|created|"
        r"launched|scored|passed|failed|sold|paid|saved|lost|gained|drive|ride|cook|play|practi[cs]e|"
        r"volunteer|coach|mentor|host|organi[sz]e|set|signed|switched|reached|hit|achieved|"
        r"graduated|registered|enrolled|applied|accepted|purchased|secured|earned|invested|upgraded|"
        r"installed|deployed|migrated|released|published|tracked|documented|updated|shifted|cut|raised|"
        r"was born|grew up|come from|am from)\b|"
        r"(?:my|our|his|her|their)\s+(?:\S+\s+){0,5}?(?:is|are|was|were|has|have|had|runs|uses|lives|works|takes|"
        r"costs|"
        r"starts|started|ends|ended|includes|covers|reached|grew|dropped|rose|increased|decreased|improved|"
        r"recommended|suggested|advised|offered|helped|joined|agreed|told|invited|introduced|said|"
        r"mentioned|shared|gave|sent|will|would|can|needs|wants|expects|prefers|likes|loves|hates)\b|"
        r"we\s+(?:\w+ly\s+)?(?:have|had|need|use|used|run|own|live|work|met|moved|started|launched|hired|bought|got|"
        r"finished|completed|built|agreed|signed|spent|saved|booked|scheduled)\b)|"
        r"\b(?:is called|is named|works (?:at|on|for)|lives in|is based in|is married|was born|"
        r"(?:my|our|his|her|their|\w+'s) birthday)\b)|"
        # a named person or thing as the subject: "Marco leads…", "Jane Doe joined…", "Lena from accounting
        # recommended…" (not any capitalised first word: "Given the focus is…", "Comparing the two makes…")
        r"^(?!(?i:the|this|that|these|those|there|here|it|its|given|if|when|while|since|after|before|as|so|"
        r"and|but|or|because|although|what|how|why|which|who|where|also|then|now|just|maybe|perhaps|each|every|"
        r"all|some|any|one|both|such|most|many|much|another|other)\b)[A-Z][a-z][\w'-]*(?<!ing)(?<!ed)(?<!ly)"
        r"(?:\s+[A-Z][\w'-]+)?,?\s+(?:(?:from|at|in|of|on)\s+(?:the\s+)?\w+\s+)?(?:is|was|leads|owns|manages|runs|"
        r"uses|works|joined|left|hates|likes|prefers|recommended|suggested|advised|offered|helped|agreed|"
        r"told|invited|introduced|said|mentioned|shared|gave|sent|started|founded|lives|moved|has|had|plays|"
        r"teaches|studies|speaks|wants|needs|loves|will|would)\b|"
        # a named person's or thing's something: "Jonah's freelance income is about 38,000"
        r"^(?-i:[A-Z][a-z][\w-]*)'s\s+(?:\S+\s+){0,4}?(?:is|are|was|were|has|have|had|costs|starts|ends|runs|"
        r"takes|will|would)\b")),
)


@dataclass(frozen=True)
class Bullet:
    text: str
    kind: str  # one of KINDS
    sentence: int | None = None  # the sentence of its message it came from (``sentences`` numbering)
    confidence: float = 1.0


def clean(text: str) -> str:
    """Remove what is never memory: fenced page context, code blocks, quotes, shell lines."""
    text = strip_context(text or "")
    text = _CODE_FENCE.sub("\n", text)
    text = _INLINE_CODE.sub(lambda m: " " if len(m.group(1)) >= LONG_CODE else m.group(0), text)
    lines = [ln for ln in text.splitlines() if not _CODE_LINE.match(ln)]
    return "\n".join(lines)


def sentences(text: str) -> list[str]:
    """The message's sentences, in order: the numbering a bullet's ``sentence`` refers to."""
    out: list[str] = []
    for line in clean(text).replace("\u2019", "'").splitlines():
        line = _BULLET.sub("", line).strip()
        if not line or line.startswith("#"):
            continue
        out += [s.strip() for s in _SENTENCE_END.split(line) if s.strip()]
    return out


def _strip_lead_in(sentence: str) -> str:
    previous = None
    while previous != sentence:
        previous, sentence = sentence, _LEAD_IN.sub("", sentence).strip()
    return sentence


def _tidy(clause: str) -> str:
    """One memory's text: no lead-in or trailing comma, a capital, a full stop (a question mark is never
    turned into one: a question is not kept), cut at ``MAX_WORDS``."""
    clause = _strip_lead_in(" ".join(clause.split()).strip(" \"'"))
    clause = re.sub(r"[\s,;:–—-]+$", "", clause).strip()
    words = clause.split()
    if len(words) > MAX_WORDS:
        clause = " ".join(words[:MAX_WORDS]).rstrip(",;:") + "…"
    if clause and clause[0].islower() and not clause.startswith(("iOS", "iPhone", "iPad", "macOS", "eBay")):
        clause = clause[0].upper() + clause[1:]
    if clause.endswith("!"):
        clause = clause.rstrip("!") + "."
    if clause and clause[-1] not in ".?…":
        clause += "."
    return clause


def is_question(sentence: str) -> bool:
    """A question to the assistant, whatever its first word ("I have two offers, which one…?")."""
    s = sentence.strip().rstrip("\"')] ")
    return s.endswith("?") or bool(_QUESTION_START.match(_strip_lead_in(s)))


_REASON = re.compile(r",\s*(?:especially\s+|particularly\s+|mainly\s+)?(?:since|considering(?: that)?|given(?: that)?|"
                     r"because|as|now that|seeing as)\s+(?=(?:i|i'm|i've|i'd|we|we're|we've|my|our)\b)", re.IGNORECASE)


def statement_part(sentence: str) -> str:
    """What the person states in the sentence: before a request begins in it, or the reason a question
    gives ("…, given that I'm on a keto diet?"); "" when it is only a question or a request."""
    s = _strip_lead_in(sentence.strip())
    m = _REQUEST_START.search(s)
    head = (s[: m.start()] if m else s).strip()
    question = s.rstrip().endswith("?") or bool(_QUESTION_START.match(s))
    if question and (not m or not head):
        reason = _REASON.search(s)
        given = s[reason.end():].rstrip(" ?") if reason else ""  # a question throughout, or its reason
        return "" if _ENDS_BACK.search(given) else given  # "…, considering I have custom CSS for them?"
    return head


def clauses(statement: str) -> list[str]:
    """A statement cut into clauses where the next one has its own subject ("…, and I met Amy…"); a
    clause that points back ("…, so I will stop there") stays with the one before it."""
    spans: list[list[int]] = []
    last = 0
    for m in _CLAUSE_BREAK.finditer(statement):
        if len(statement[last : m.start()].split()) >= MIN_CLAUSE_WORDS:
            spans.append([last, m.start()])
            last = m.end()
    spans.append([last, len(statement)])
    merged: list[list[int]] = []
    for span in spans:
        previous = statement[merged[-1][0] : merged[-1][1]] if merged else ""
        if merged and _points_back(statement[span[0] : span[1]]) and classify(_unframed(previous)):
            merged[-1][1] = span[1]
        else:
            merged.append(span)
    return [piece for a, b in merged if (piece := statement[a:b].strip())]


def _points_back(clause: str) -> bool:
    """The clause leans on the one before it: a pronoun among its first words or its last ("…, so I will
    stop there too"), not one that refers inside it ("my partner Sam joined me after finishing her degree")."""
    words = clause.split()
    return bool(_POINTS_BACK.search(" ".join(words[:5])) or _ENDS_BACK.search(" ".join(words[-2:])))


def _unframed(clause: str) -> str:
    return _strip_lead_in(unframe(_strip_lead_in(clause)))


def unframe(clause: str) -> str:
    """The fact a feeling or a reason frames: "I'm worried that my X is Y" → "my X is Y"; "Given that I'm
    on a keto diet" → "I'm on a keto diet"."""
    for frame in (_FRAME, _FEEL_LIKE, _OPENER):
        m = frame.match(clause)
        if m and len(clause[m.end():].split()) >= MIN_WORDS:
            return clause[m.end():]
    return clause


def has_specific(clause: str) -> bool:
    """A number, a date word, a quoted title or a name past the first word: something to look up later."""
    rest = " " + clause.split(" ", 1)[-1]
    return bool(_SPECIFIC.search(clause) or _NAME.search(rest) or _ACRONYM.search(rest))


def has_figure(text: str) -> bool:
    """A number, a date word, a frequency or a quoted title: ``has_specific`` without names."""
    return bool(_SPECIFIC.search(text))


def classify(clause: str) -> str | None:
    """The kind of durable information a clause carries, or ``None`` to drop it."""
    words = clause.split()
    if len(words) < MIN_WORDS or is_question(clause):
        return None
    if _CHITCHAT.match(clause) or _DANGLING.match(clause) or _HEARSAY.match(clause) or _POINTS_FORWARD.search(clause):
        return None
    dangling = _DANGLING_OBJECT.search(clause)
    if dangling and not has_specific(clause) and len(_content_words(clause[: dangling.start()])) == 0:
        return None  # "I'll probably do it after payday": what "it" is lives in another message
    kind = next((k for k, cue in KIND_CUES if cue.search(clause)), None)
    if kind == "instruction":
        return kind
    if kind is None and _STANDING.match(clause):
        return "instruction"
    if _REQUEST.match(clause):
        return None
    if kind is None and has_specific(clause) and (_FIRST_PERSON.match(clause) or _WEAK_FACT.match(clause)):
        kind = "fact"  # a first-person statement, or one about a named thing, with something specific in it
    content = len(_content_words(clause))
    if kind is None or content == 0 or content == 1 and kind != "fact":
        return None  # "I'll think about it": nothing left once the pronouns and little words are gone
    if kind in ("plan", "decision") and content < 3 and not has_specific(clause):
        return None  # "I'll stick with the real stuff", "I think I'll grab the deal now": a plan of what?
    if kind in ("fact", "plan") and _UNRESOLVED.search(clause) and not has_specific(clause):
        return None  # "I'll send the message now and wait for their response": its subject is elsewhere
    return kind


_LITTLE = frozenset(
    "i me my we us our you your it its this that these those they them their he him his she her there here a an the "
    "and or but so to of in on at for with about from by as is are was were be been am do does did have has had "
    "will would can could should might may must shall i'm i've i'll i'd we're we've we'll it's that's there's "
    "just really very also too then now still maybe probably think guess sure yeah ok okay well not no yes "
    "get got go going gonna make sure try trying thing things stuff lot bit".split())


def _content_words(clause: str) -> list[str]:
    return [w for w in re.findall(r"[\w'$%-]+", clause.casefold()) if w not in _LITTLE]


def confidence_of(clause: str, kind: str) -> float:
    if kind == "instruction":
        return 1.0
    if _HEDGE.search(clause):
        return HEDGED
    if _TENTATIVE.search(clause):
        return TENTATIVE
    return 1.0


def distil_sentence(sentence: str, number: int | None = None) -> list[Bullet]:
    """The memories one sentence carries (none, one, or one per clause of a run-on sentence)."""
    s = _strip_lead_in(sentence.strip())
    if not s or _CHITCHAT.match(s) and len(s.split()) < 8:
        return []
    instruction = KIND_CUES[0][1]
    if instruction.search(s) and not s.rstrip().endswith("?"):
        return [Bullet(_tidy(s), "instruction", number, 1.0)]
    statement = _HERE_TAIL.sub("", statement_part(s))  # "I use MVC, so here's my code:" → "I use MVC"
    pieces = [(clause, classify(clause)) for clause in map(_past_task, map(_unframed, clauses(statement)))]
    kinds = [kind for clause, kind in pieces if kind is not None]
    if len(pieces) > 1 and kinds and all(clause for clause, _ in pieces) and len(statement.split()) <= WHOLE_WORDS:
        whole = _unframed(statement)  # "My partner Stephen and I just celebrated…": one memory, not its halves
        return [Bullet(_tidy(whole), kinds[0], number, confidence_of(whole, kinds[0]))]
    return [Bullet(_tidy(clause), kind, number, confidence_of(clause, kind)) for clause, kind in pieces
            if kind is not None]


def _past_task(clause: str) -> str:
    """A clause with the task at hand or a pointer to what follows left out: "" for "I'm trying to classify a
    triangle…" (unless it names the person's own numbers), the reason for "I'm trying to understand this,
    especially since I've improved by 20%"."""
    if _POINTS_FORWARD.search(clause):
        return ""  # "I've been using the following code to measure TTI:" leans on what follows
    task = _TASK.match(clause)
    if not task or _OWN.search(clause, task.end()) and has_figure(clause[task.end():]):
        return clause  # "…how my quiz score rose from 75% to 92%": the person's own numbers outlast the task
    reason = _TASK_REASON.search(clause)
    return clause[reason.end():] if reason else ""


def extract_bullets(text: str) -> list[Bullet]:
    """Durable memories from one message, in order, without repeats."""
    seen: set[str] = set()
    out: list[Bullet] = []
    for number, sentence in enumerate(sentences(text)):
        for bullet in distil_sentence(sentence, number):
            key = " ".join(bullet.text.casefold().split())
            if key not in seen:
                seen.add(key)
                out.append(bullet)
    return out
